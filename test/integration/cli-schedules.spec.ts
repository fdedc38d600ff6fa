import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatekeeperModule, ScheduleHandler, ScheduleService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { cli, CLI_BIN } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

/** The handler the schedules name; runs are counted by tenant. */
@Injectable()
class TenantReports {
  runs: string[] = [];

  @ScheduleHandler('tenant-report')
  report(data: { tenant: string }): void {
    this.runs.push(data.tenant);
  }
}

const DAILY = { cron: '0 30 2 * * *', timeZone: 'Europe/Berlin', handler: 'tenant-report', data: { tenant: 'acme' }, duration: '10s' };

/**
 * The CLI's schedules commands (built binary) against a real member and a live app that has the handler: every
 * change goes through the cluster's catalog directly (no admin API), and the app sees it.
 */
describe('nestjs-gatekeeper schedules (built binary, real member)', () => {
  const { clusterName, addresses } = testCluster();
  const mapPrefix = uniquePrefix('cli-schedules');
  const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName, GATEKEEPER_MAP_PREFIX: mapPrefix };
  const run = (...args: string[]) => cli(args, env);
  const json = async (...args: string[]) => {
    const result = await run('--json', ...args);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return JSON.parse(result.stdout);
  };
  /** A failed `--json` command: its exit code and its error object. */
  const failed = async (...args: string[]) => {
    const result = await run('--json', ...args);
    return { code: result.code, stdout: result.stdout, error: result.stderr ? JSON.parse(result.stderr).error : undefined };
  };
  let dir: string;
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  let app: INestApplication;
  let service: ScheduleService;

  beforeAll(async () => {
    if (!existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run npm run build first (npm test does)`);
    dir = mkdtempSync(join(tmpdir(), 'cli-schedules-'));
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        identity: { acquirer: 'cli-sched-a', group: 'production' },
        hazelcast: { clientConfig: testClientConfig(), mapPrefix },
        schedules: { history: { flushInterval: '200ms' } },
      })],
      providers: [TenantReports],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    service = app.get(ScheduleService);
  });
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('upserts from a JSON file (an equal one writes nothing), and the app sees what the CLI wrote', async () => {
    const created = await json('schedules', 'upsert', '--file', file('acme.json', { id: 'report-acme', ...DAILY }));
    expect(created).toMatchObject({ id: 'report-acme', outcome: 'created', revision: expect.any(Number), schedule: { definition: { cron: '0 30 2 * * *', durationMs: 10_000 } } });
    expect(await service.schedule('report-acme')).toMatchObject({ revision: created.revision, updatedBy: `cli@${hostname()}`, definition: { handler: 'tenant-report', data: { tenant: 'acme' } } });
    const again = await run('schedules', 'upsert', '--file', join(dir, 'acme.json'));
    expect([again.code, again.stdout.trim()]).toEqual([0, `schedule report-acme: unchanged, revision ${created.revision} (nothing was written)`]);
    // The file the runtime schedules page shows.
    const example = await run('schedules', 'upsert', '--file', join(__dirname, '../../examples/tenant-schedule.json'));
    expect([example.code, example.stdout]).toEqual([0, expect.stringMatching(/^schedule report-initech-morning: created, revision \d+\n$/)]);
    expect(await service.schedule('report-initech-morning')).toMatchObject({
      definition: { cron: '0 30 6 * * 1-5', timeZone: 'Europe/Berlin', data: { format: 'pdf', tenant: 'initech' }, missedRuns: 'runOnce', catchUpWindowMs: 7_200_000 },
    });
    expect((await run('schedules', 'remove', 'report-initech-morning')).stdout).toMatch(/^schedule report-initech-morning: removed, revision \d+\n$/);
  });

  it('refuses a change whose --expected-revision is stale (exit 1, REVISION_CONFLICT) and changes nothing; a current one applies', async () => {
    const { revision } = (await service.schedule('report-acme'))!;
    const edited = file('acme-3am.json', { id: 'report-acme', ...DAILY, cron: '0 0 3 * * *' });
    const stale = await failed('schedules', 'upsert', '--file', edited, '--expected-revision', String(revision - 1));
    expect(stale).toMatchObject({ code: 1, stdout: '', error: { code: 'REJECTED', exitCode: 1, schedule: 'report-acme', reason: 'REVISION_CONFLICT', expectedRevision: revision - 1, actualRevision: revision } });
    expect(stale.error.semaphore).toBeUndefined();
    for (const action of ['pause', 'resume', 'remove']) {
      expect(await failed('schedules', action, 'report-acme', '--expected-revision', String(revision + 1))).toMatchObject({ code: 1, error: { reason: 'REVISION_CONFLICT' } });
    }
    expect(await service.schedule('report-acme')).toMatchObject({ revision, definition: { cron: '0 30 2 * * *', paused: false } });
    expect(await json('schedules', 'upsert', '--file', edited, '--expected-revision', String(revision))).toMatchObject({ outcome: 'updated', revision: revision + 1 });
    expect(await service.schedule('report-acme')).toMatchObject({ revision: revision + 1, definition: { cron: '0 0 3 * * *' } });
  });

  it('checks the command line before connecting: a bad definition, file or revision is exit 2 naming the field, nothing stored', async () => {
    const before = await service.schedules();
    const bad: Array<[string, string]> = [
      ['cron', file('bad-cron.json', { id: 'report-bad', ...DAILY, cron: '0 99 * * *' })],
      ['cron', file('bad-shape.json', { id: 'report-bad', ...DAILY, cron: 'daily' })],
      ['timeZone', file('bad-zone.json', { id: 'report-bad', ...DAILY, timeZone: 'Mars/Olympus_Mons' })],
      ['handler', file('bad-handler.json', { id: 'report-bad', ...DAILY, handler: '' })],
      ['data', file('bad-data.json', { id: 'report-bad', ...DAILY, data: { blob: 'x'.repeat(70_000) } })],
      ['permits', file('bad-permits.json', { id: 'report-bad', ...DAILY, permits: 0 })],
      ['duration', file('bad-duration.json', { id: 'report-bad', ...DAILY, duration: 'soon' })],
      ['id', file('bad-id.json', { ...DAILY })],
      ['file', file('not-json.json', '{"id": "report-bad", cron: nope}')],
      ['file', join(dir, 'missing.json')],
    ];
    for (const [field, path] of bad) {
      const result = await failed('schedules', 'upsert', '--file', path);
      expect([field, result.code, result.error.field, result.error.code]).toEqual([field, 2, field, 'USAGE']);
    }
    expect((await failed('schedules', 'upsert', '--file', join(dir, 'bad-cron.json'))).error.message).toContain('invalid cron');
    expect(await failed('schedules', 'pause', 'report-acme', '--expected-revision', 'abc')).toMatchObject({ code: 2, error: { field: 'expectedRevision', option: '--expected-revision' } });
    expect(await failed('schedules', 'pause', '')).toMatchObject({ code: 2, error: { field: 'id' } });
    expect((await run('schedules', 'upsert')).code).toBe(2); // --file is required
    expect(await service.schedules()).toEqual(before);
  });

  it('lists and shows schedules with next runs, the last run from the job history, and which live node runs each', async () => {
    await json('schedules', 'upsert', '--file', file('second.json', { id: 'report-initech', ...DAILY, cron: '* * * * * *', data: { tenant: 'initech' } }));
    await json('schedules', 'upsert', '--file', file('orphan.json', { id: 'report-orphan', ...DAILY, handler: 'no-node-has-this' }));
    const listed = await eventually('the last run of report-initech in the listing', async () => {
      const all = await json('schedules', 'list');
      return all.find((s: { id: string; lastRun?: unknown }) => s.id === 'report-initech' && s.lastRun) ? all : undefined;
    }, { timeoutMs: 15_000, intervalMs: 300 });
    expect(listed.map((s: { id: string }) => s.id)).toEqual(['report-acme', 'report-initech', 'report-orphan']);
    const initech = listed[1];
    expect(initech.lastRun).toMatchObject({ job: 'report-initech', node: 'cli-sched-a', outcome: 'completed' });
    expect(initech.nextRun).toBeGreaterThan(Date.now() - 2_000);
    expect(listed[0].nextRun % 3_600_000).toBe(0); // 03:00 in Berlin, on the hour
    const table = await run('schedules');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+HANDLER\s+CRON\s+ZONE\s+PAUSED\s+REVISION\s+NEXT RUN\s+LAST RUN\n/);
    expect(table.stdout).toMatch(/report-initech\s+tenant-report\s+\* \* \* \* \* \*\s+Europe\/Berlin\s+no\s+\d+\s+\S+\s+completed on cli-sched-a, /);

    const shown = await json('schedules', 'show', 'report-initech');
    expect(shown).toMatchObject({ id: 'report-initech', takers: { verdict: 'running', semaphoreDefined: true, holders: [{ acquirer: 'cli-sched-a', fencingToken: expect.any(Number) }] } });
    expect(shown.nextRuns).toHaveLength(5);
    const text = await run('schedules', 'show', 'report-initech');
    expect(text.stdout).toContain('run by: cli-sched-a (group production, token');
    expect(text.stdout).toContain('cron: * * * * * * (zone Europe/Berlin); handler: tenant-report; data: {"tenant":"initech"}');
    // No node has the orphan's handler: none defined its semaphore, and the CLI says so.
    expect(await json('schedules', 'show', 'report-orphan')).toMatchObject({ takers: { verdict: 'notTakenUp', semaphoreDefined: false, holders: [] } });
    expect((await run('schedules', 'show', 'report-orphan')).stdout).toContain('If that stays so, no live node has the handler.');
  });

  it('pauses (the app stops running it), resumes and removes; an unknown id is exit 1 UNKNOWN_SCHEDULE', async () => {
    const reports = app.get(TenantReports);
    // A second per-second schedule keeps time: while it runs on, report-initech would have run too, unless paused.
    await json('schedules', 'upsert', '--file', file('metronome.json', { id: 'report-metronome', ...DAILY, cron: '* * * * * *', data: { tenant: 'metronome' } }));
    const beats = () => reports.runs.filter((t) => t === 'metronome').length;
    await eventually('the metronome running', () => beats() > 0, { timeoutMs: 10_000 });
    const paused = await run('schedules', 'pause', 'report-initech');
    expect([paused.code, paused.stdout]).toEqual([0, expect.stringMatching(/^schedule report-initech: paused, revision \d+\n$/)]);
    expect((await service.schedule('report-initech'))!.definition.paused).toBe(true);
    const shown = await json('schedules', 'show', 'report-initech');
    expect(shown).toMatchObject({ definition: { paused: true }, nextRuns: [], takers: { verdict: 'paused' } });
    // The app hears the pause by its event (or the re-read after missed changes): three beats later it has.
    const afterPause = beats();
    await eventually('three beats after the pause', () => beats() >= afterPause + 3, { timeoutMs: 15_000 });
    const initech = () => reports.runs.filter((t) => t === 'initech').length;
    const runsPaused = initech();
    const settled = beats();
    await eventually('two more beats', () => beats() >= settled + 2, { timeoutMs: 15_000 });
    expect(initech()).toBe(runsPaused);
    const resumed = await json('schedules', 'resume', 'report-initech', '--expected-revision', String(shown.revision));
    expect(resumed).toMatchObject({ outcome: 'updated', revision: shown.revision + 1, schedule: { definition: { paused: false } } });
    await eventually('a run after the resume', () => initech() > runsPaused, { timeoutMs: 10_000 });

    expect(await json('schedules', 'remove', 'report-initech')).toMatchObject({ outcome: 'removed', revision: shown.revision + 2 });
    expect(await service.schedule('report-initech')).toBeUndefined();
    expect((await run('schedules', 'remove', 'report-initech')).stdout).toBe('schedule report-initech: nothing to remove (no such schedule)\n');
    for (const args of [['show', 'report-initech'], ['pause', 'report-initech'], ['resume', 'report-initech']]) {
      expect(await failed('schedules', ...args)).toMatchObject({ code: 1, error: { code: 'REJECTED', schedule: 'report-initech', reason: 'UNKNOWN_SCHEDULE' } });
    }
  });

  it('applies two concurrent upserts of one id from two CLI processes both, in some order: none lost, the newest revision wins', async () => {
    const [v1, v2] = await Promise.all([
      json('schedules', 'upsert', '--file', file('race-1.json', { id: 'report-race', ...DAILY, data: { tenant: 'race', version: 1 } })),
      json('schedules', 'upsert', '--file', file('race-2.json', { id: 'report-race', ...DAILY, data: { tenant: 'race', version: 2 } })),
    ]);
    expect([v1.outcome, v2.outcome].sort()).toEqual(['created', 'updated']);
    expect(Math.abs(v1.revision - v2.revision)).toBe(1);
    const newest = v1.revision > v2.revision ? v1 : v2;
    expect(await service.schedule('report-race')).toMatchObject({ revision: newest.revision, definition: { data: newest.schedule.definition.data } });
  });
});
