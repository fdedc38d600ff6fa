import { Injectable, type INestApplication, type OnModuleInit } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import {
  AllocationService, ClusterSingleton, GatekeeperModule, GatekeeperService, ScheduleHandler, SemaphoreAdminService, TaskHandler, TaskService, type TaskContext,
} from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

const TOKEN = 'pg-admin-token-0123456789';
const NODE = 'pg-admin-node';

/** Every operation of docs/admin-api.openapi.json (`GET /definitions/{name}`) with the one success status it promises. */
const documented = new Map<string, number>();
for (const [path, operations] of Object.entries(JSON.parse(readFileSync(join(__dirname, '../../docs/admin-api.openapi.json'), 'utf8')).paths)) {
  for (const [verb, operation] of Object.entries(operations as Record<string, { responses: Record<string, unknown> }>)) {
    const success = Object.keys(operation.responses).filter((code) => code.startsWith('2'));
    if (success.length !== 1) throw new Error(`${verb} ${path} documents ${success.length} success statuses`);
    documented.set(`${verb.toUpperCase()} ${path}`, Number(success[0]));
  }
}

/** The documented operation a concrete request is (a literal path before a templated one: `/tasks/list` before `/tasks/{id}`). */
function operationOf(method: string, path: string): string {
  const bare = path.split('?')[0];
  const matches = [...documented.keys()].filter((key) => {
    const [verb, template] = key.split(' ');
    return verb === method && new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(bare);
  });
  matches.sort((a, b) => a.split('{').length - b.split('{').length);
  if (!matches[0]) throw new Error(`${method} ${path} is no documented operation`);
  return matches[0];
}

/** A failing task until healed, one that runs until cancelled, a group's part, a cron job, a runtime schedules' handler, an allocation. */
@Injectable()
class PgWork implements OnModuleInit {
  static heal = false;
  runs = 0;
  constructor(private readonly allocations: AllocationService) {}

  onModuleInit(): void {
    this.allocations.participate('queues', { resources: () => ['queue-1', 'queue-2', 'queue-3'] });
  }

  @Cron('0 30 2 * * *', { timeZone: 'Europe/Berlin' })
  @ClusterSingleton('pg-nightly', '10s')
  async nightly(): Promise<void> {
    this.runs++;
  }

  @TaskHandler('flaky', { maxAttempts: 1 })
  flaky(): string {
    if (!PgWork.heal) throw new Error('the ledger is locked');
    return 'reconciled';
  }

  @TaskHandler('slow', { lease: '10s' })
  async slow(_data: unknown, task: TaskContext): Promise<void> {
    await new Promise<void>((resolve) => task.signal.addEventListener('abort', () => resolve()));
  }

  @TaskHandler('part')
  part(data: { n: number }): number {
    return data.n * 2;
  }

  @ScheduleHandler('tenant-report')
  report(): void {}
}

/**
 * Every operation of the admin HTTP API (and the console's) answered on the PostgreSQL backend with the success
 * status its OpenAPI document gives, walked in an order that makes each succeed; an operation added to the document
 * without a call here fails the last check.
 */
describe('admin HTTP API on PostgreSQL: every documented operation', () => {
  let app: INestApplication;
  let base: string;
  const mapPrefix = uniquePrefix('pg-admin');
  const called = new Set<string>();

  /** Calls one operation (with the token unless `headers` are given), expects its documented success status, answers the body. */
  async function op(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
    const operation = operationOf(method, path);
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...(headers ?? { authorization: `Bearer ${TOKEN}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status !== documented.get(operation)) throw new Error(`${operation} (${method} ${path}) answered ${response.status}, not ${documented.get(operation)}: ${text}`);
    called.add(operation);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of many shapes, read by the test
    const json: any = text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
    return { body: json, text, headers: response.headers };
  }

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        GatekeeperModule.forRoot({
          backend: 'postgres',
          postgres: { connectionString: testPostgresUrl(), mapPrefix },
          identity: { acquirer: NODE, group: 'production' },
          definitions: [{ name: 'billing', duration: '30s', groupPattern: 'production' }, { name: 'reports', duration: '30s', permits: 2 }],
          membership: { interval: '500ms' },
          elections: [{ name: 'leader', lease: '2s' }],
          allocations: [{ name: 'queues', lease: '2s', rebalanceDelay: '200ms' }],
          maxClockSkew: '100ms',
          tasks: { scanInterval: '200ms' },
          schedules: { history: { flushInterval: '200ms' } },
          admin: { path: 'ops', token: TOKEN, console: true },
        }),
      ],
      providers: [PgWork],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers definitions, pause and resume, migrations and their undo, and permits', async () => {
    expect((await op('GET', '/definitions')).body.map((d: { name: string }) => d.name)).toEqual(expect.arrayContaining(['billing', 'reports']));
    expect((await op('GET', '/definitions/reports')).body).toMatchObject({ name: 'reports', permits: 2, durationMs: 30_000 });
    expect((await op('PUT', '/definitions/nightly', { duration: '1h', groupPattern: 'dr-site' })).body).toMatchObject({ name: 'nightly', permits: 1, durationMs: 3_600_000 });
    expect((await op('PATCH', '/definitions/nightly', { permits: 3 })).body).toMatchObject({ permits: 3, groupPattern: 'dr-site' });
    await op('DELETE', '/definitions/nightly');
    expect((await op('POST', '/definitions/reports/pause')).body).toMatchObject({ permits: 0, pausedFrom: 2 });
    expect((await op('POST', '/definitions/reports/resume')).body).toMatchObject({ permits: 2 });

    const gatekeeper = app.get(GatekeeperService);
    const semaphores = app.get(SemaphoreAdminService);
    const moved = await op('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', force: true });
    expect(moved.body).toMatchObject({ dryRun: false, changes: [{ name: 'billing', from: 'production', to: 'dr-site' }] });
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('dr-site');
    expect((await op('POST', '/migrate/undo', { dryRun: false })).body).toMatchObject({ changes: [{ name: 'billing', to: 'production' }] });
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('production');

    const granted = await eventually('a billing permit', async () => {
      const answer = await gatekeeper.tryAcquire('billing');
      return answer.granted ? answer.permit : undefined;
    });
    const billing = (await op('GET', '/permits')).body.find((s: { name: string }) => s.name === 'billing');
    expect(billing.permits).toEqual([granted]);
    await op('DELETE', `/permits/billing/${granted.fencingToken}`);
    await eventually('the holder to let go', async () => (await gatekeeper.refresh(granted)).granted === false);
  });

  it('answers the cluster, its election (and a resignation), and its allocation (and a rebalance)', async () => {
    const cluster = await eventually('this node and a leader in the cluster view', async () => {
      const { body } = await op('GET', '/cluster');
      return body.participants.some((p: { acquirer: string }) => p.acquirer === NODE) && body.elections[0]?.leader ? body : undefined;
    });
    expect(cluster.elections).toEqual([expect.objectContaining({ name: 'leader', semaphore: 'election:leader' })]);
    const leader = (await op('GET', '/elections/leader')).body;
    expect(leader).toMatchObject({ name: 'leader', leader: { acquirer: NODE } });
    expect((await op('POST', '/elections/leader/resign')).body).toEqual({ election: 'leader', resigned: true, epoch: leader.epoch, leader: leader.leader });
    await eventually('a new term', async () => (await op('GET', '/elections/leader')).body.epoch > leader.epoch);

    const allocation = await eventually('the queues owned', async () => {
      const { body } = await op('GET', '/allocations/queues');
      return body.unowned === 0 && body.lastRebalance ? body : undefined;
    });
    expect(allocation).toMatchObject({ name: 'queues', resources: 3, owners: [{ acquirer: NODE }] });
    expect((await op('GET', '/allocations')).body.map((a: { name: string }) => a.name)).toEqual(['queues']);
    expect((await op('POST', '/allocations/queues/rebalance')).body).toEqual({ requested: true, allocation: 'queues' });
    await eventually('a new plan', async () => (await op('GET', '/allocations/queues')).body.lastRebalance.generation > allocation.lastRebalance.generation);
  });

  it('answers tasks: counts, list, one, a group, retry, cancel and purge', async () => {
    const tasks = app.get(TaskService);
    await tasks.submit({ type: 'flaky', name: 'ledger-1' });
    await tasks.submit({ type: 'slow', name: 'export' });
    await tasks.submit({ type: 'part', group: { name: 'g', number: 1, total: 1 }, data: { n: 1 } });
    const state = async (id: string) => (await tasks.get(id))?.state;
    await eventually('the tasks settled', async () => (await state('flaky:ledger-1')) === 'failed' && (await state('slow:export')) === 'running'
      && (await state('part:g:1')) === 'done', { timeoutMs: 15_000 });
    expect((await op('GET', '/tasks')).body.counts).toMatchObject({ flaky: { failed: 1 }, slow: { running: 1 }, part: { done: 1 } });
    expect((await op('GET', '/tasks/list?state=failed')).body.map((t: { id: string }) => t.id)).toEqual(['flaky:ledger-1']);
    const failed = (await op('GET', `/tasks/${encodeURIComponent('flaky:ledger-1')}`)).body;
    expect(failed.attempts).toEqual([expect.objectContaining({ outcome: 'failed', error: 'the ledger is locked', acquirer: NODE })]);
    expect((await op('GET', '/tasks/groups/part/g')).body).toMatchObject({ id: 'part:g', total: 1, finished: 1, states: { done: 1 } });
    PgWork.heal = true;
    expect((await op('POST', `/tasks/${encodeURIComponent('flaky:ledger-1')}/retry`)).body).toMatchObject({ id: 'flaky:ledger-1', state: 'pending' });
    await eventually('the retry to succeed', async () => (await state('flaky:ledger-1')) === 'done');
    expect((await op('POST', `/tasks/${encodeURIComponent('slow:export')}/cancel`)).body).toMatchObject({ id: 'slow:export', state: 'cancelled' });
    expect((await op('POST', '/tasks/purge', { types: ['part'], states: ['done'] })).body).toEqual({ purged: 1 });
    expect(await tasks.get('part:g:1')).toBeUndefined();
  });

  it('answers jobs: list, describe, run now (on this node), the history that records it, pause and resume', async () => {
    const work = app.get(PgWork);
    expect((await op('GET', '/jobs')).body).toEqual([expect.objectContaining({ job: 'PgWork.nightly', semaphore: 'pg-nightly', cron: '0 30 2 * * *' })]);
    expect((await op('GET', '/jobs/PgWork.nightly')).body).toMatchObject({ job: 'PgWork.nightly', definition: { permits: 1, durationMs: 10_000 }, nextRuns: expect.any(Array) });
    const started = (await op('POST', '/jobs/PgWork.nightly/run', { timeout: '10s' })).body;
    expect(started).toMatchObject({ job: 'PgWork.nightly', node: NODE, token: expect.any(Number), requestId: expect.any(String) });
    await eventually('the manual run', () => work.runs === 1);
    const history = await eventually('the run in the history', async () => {
      const { body } = await op('GET', '/jobs/PgWork.nightly/history?limit=5');
      return body.runs[0]?.outcome === 'completed' ? body : undefined;
    });
    expect(history.runs[0]).toMatchObject({ trigger: 'manual', node: NODE, request: started.requestId, token: started.token });
    // Its health from that history: a run completed within the hour.
    expect((await op('GET', '/jobs/PgWork.nightly/health?within=1h')).body).toMatchObject({ status: 'up', job: 'PgWork.nightly', failuresSince: 0, lastSuccessAt: expect.any(Number) });
    // Paused by its name: its semaphore, the count kept in PostgreSQL; the listing says so until the resume.
    expect((await op('POST', '/jobs/PgWork.nightly/pause')).body).toEqual({ job: 'PgWork.nightly', paused: true, by: 'semaphore', semaphore: 'pg-nightly', permits: 0, alsoAffected: [] });
    expect(await app.get(SemaphoreAdminService).readDefinition('pg-nightly')).toMatchObject({ permits: 0, pausedFrom: 1 });
    await eventually('the pause in the listing', async () => (await op('GET', '/jobs')).body[0].paused === true);
    expect((await op('POST', '/jobs/PgWork.nightly/resume')).body).toMatchObject({ job: 'PgWork.nightly', paused: false, permits: 1 });
    await eventually('the resume in the listing', async () => (await op('GET', '/jobs')).body[0].paused === false);
  });

  it('answers runtime schedules: put, list, read back, pause, resume and delete', async () => {
    const daily = { cron: '0 30 2 * * *', timeZone: 'Europe/Berlin', handler: 'tenant-report', data: { tenant: 'acme' }, duration: '10s' };
    const created = (await op('PUT', '/schedules/report-acme', daily)).body;
    expect(created).toMatchObject({ id: 'report-acme', outcome: 'created', revision: expect.any(Number) });
    expect((await op('GET', '/schedules')).body.map((s: { id: string }) => s.id)).toEqual(['report-acme']);
    const read = (await op('GET', '/schedules/report-acme')).body;
    expect(read).toMatchObject({ revision: created.revision, updatedBy: NODE, handledHere: true, definition: { data: { tenant: 'acme' }, timeZone: 'Europe/Berlin', paused: false } });
    expect(read.nextRuns).toHaveLength(10);
    const paused = (await op('POST', `/schedules/report-acme/pause?expectedRevision=${created.revision}`)).body;
    expect(paused).toMatchObject({ outcome: 'updated', schedule: { definition: { paused: true } } });
    expect((await op('POST', '/schedules/report-acme/resume')).body).toMatchObject({ outcome: 'updated', revision: paused.revision + 1, schedule: { definition: { paused: false } } });
    expect((await op('DELETE', '/schedules/report-acme')).body).toMatchObject({ id: 'report-acme', outcome: 'removed' });
    expect((await op('GET', '/schedules')).body).toEqual([]);
  });

  it('serves the console and its assets, and signs in and out', async () => {
    const none = {};
    expect((await op('GET', '/console', undefined, none)).text).toContain('<script src="/ops/console/console.client.js" defer></script>');
    expect((await op('GET', '/console/console.css', undefined, none)).headers.get('content-type')).toContain('text/css');
    expect((await op('GET', '/console/console.client.js', undefined, none)).headers.get('content-type')).toContain('javascript');
    const signedIn = await op('POST', '/console/session', { token: TOKEN }, none);
    const session = { cookie: signedIn.headers.get('set-cookie')!.split(';')[0] };
    expect((await op('GET', '/console/session', undefined, session)).body).toEqual({ signedIn: true, signIn: 'token' });
    expect((await op('DELETE', '/console/session', undefined, session)).headers.get('set-cookie')).toContain('Max-Age=0');
  });

  it('called every operation the OpenAPI document has, on state kept in PostgreSQL', async () => {
    expect([...called].sort()).toEqual([...documented.keys()].sort());
    const pool = new Pool({ connectionString: testPostgresUrl(), max: 1 });
    try {
      // Permits, presence, runtime schedules, the run history (written at its next flush) and tasks: each where the API
      // read and wrote it.
      const wanted = ['semaphores', 'presence', 'schedules', 'job-runs', 'tasks'];
      const stored = await eventually('every capability\'s rows in PostgreSQL', async () => {
        const { rows } = await pool.query<{ map: string }>('SELECT DISTINCT map FROM gatekeeper.records WHERE starts_with(map, $1) UNION SELECT DISTINCT map FROM gatekeeper.tasks WHERE starts_with(map, $1)', [`${mapPrefix}.`]);
        const maps = rows.map((r) => r.map.slice(mapPrefix.length + 1));
        return wanted.every((name) => maps.includes(name)) ? maps : undefined;
      }, { timeoutMs: 10_000 });
      expect(stored).toEqual(expect.arrayContaining(wanted));
    } finally {
      await pool.end();
    }
  });
});
