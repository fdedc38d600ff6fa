import { Injectable, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { GatekeeperModule, ScheduleHandler, ScheduleService, type GatekeeperModuleOptions } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'schedules-admin-token-0123456789';

/** The handler the schedules name (a daily cron never fires within a test; a per-second one does). */
@Injectable()
class TenantReports {
  runs: string[] = [];

  @ScheduleHandler('tenant-report')
  report(data: { tenant: string }): void {
    this.runs.push(data.tenant);
  }
}

/** An app with the admin API (and console) under `/ops`, listening on a free port; `call` sends the token unless told. */
async function startApp(options: Partial<GatekeeperModuleOptions>, platform: 'express' | 'fastify' = 'express') {
  const moduleRef = await Test.createTestingModule({
    imports: [GatekeeperModule.forRoot({
      identity: { acquirer: 'schedules-node', group: 'production' },
      admin: { path: 'ops', token: TOKEN, console: true },
      schedules: { history: { flushInterval: '200ms' } },
      ...options,
    })],
    providers: [TenantReports],
  }).setLogger(new CapturingLogger()).compile();
  const app: INestApplication = platform === 'fastify' ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false }) : moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops`;
  const call = async (method: string, path: string, init: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string> } = {}) => {
    const token = init.token === undefined ? TOKEN : init.token;
    const hasBody = init.body !== undefined || init.raw !== undefined;
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...(token !== null && { authorization: `Bearer ${token}` }), ...(hasBody && { 'content-type': 'application/json' }), ...init.headers },
      ...(hasBody && { body: init.raw ?? JSON.stringify(init.body) }),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of many shapes, read by tests
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any, headers: response.headers };
  };
  return { app, call, reports: app.get(TenantReports), schedules: app.get(ScheduleService) };
}

const DAILY = { cron: '0 30 2 * * *', timeZone: 'Europe/Berlin', handler: 'tenant-report', data: { tenant: 'acme' }, duration: '10s' };

describe('admin API: runtime schedules (memory store)', () => {
  let node: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    node = await startApp({ backend: 'memory', membership: false });
  });
  afterAll(async () => {
    await node.app.close();
  });

  it('creates a schedule with PUT, reads it back with its next fire instants, and writes nothing for an equal PUT', async () => {
    const created = await node.call('PUT', '/schedules/report-acme', { body: DAILY });
    expect(created).toMatchObject({ status: 200, body: { id: 'report-acme', outcome: 'created', revision: expect.any(Number), schedule: { definition: { cron: '0 30 2 * * *', handler: 'tenant-report', permits: 1, durationMs: 10_000 } } } });
    const one = await node.call('GET', '/schedules/report-acme');
    expect(one).toMatchObject({ status: 200, body: { id: 'report-acme', revision: created.body.revision, updatedBy: 'schedules-node', handledHere: true, definition: { timeZone: 'Europe/Berlin', data: { tenant: 'acme' }, paused: false } } });
    expect(one.body.nextRuns).toHaveLength(10);
    expect(new Date(one.body.nextRuns[0]).getUTCMinutes()).toBe(30); // 02:30 in Berlin is 00:30 or 01:30 UTC
    expect(one.body.nextRuns[0]).toBeGreaterThan(Date.now());
    // The id may be in the body too, if it is the path's.
    const again = await node.call('PUT', '/schedules/report-acme', { body: { ...DAILY, id: 'report-acme' } });
    expect(again).toMatchObject({ status: 200, body: { outcome: 'unchanged', revision: created.body.revision } });
    const listed = await node.call('GET', '/schedules');
    expect(listed.status).toBe(200);
    expect(listed.body.find((s: { id: string }) => s.id === 'report-acme')).toMatchObject({ revision: created.body.revision, nextRuns: [one.body.nextRuns[0]] });
  });

  it('reads yearly and leap-day schedules back with the instants within the cron package\'s 8 years, and why no more', async () => {
    for (const [id, cron, date] of [['new-year', '0 0 0 1 1 *', '-01-01'], ['leap-day', '0 0 0 29 2 *', '-02-29']] as const) {
      expect((await node.call('PUT', `/schedules/${id}`, { body: { ...DAILY, cron, timeZone: 'UTC' } })).status).toBe(200);
      const one = await node.call('GET', `/schedules/${id}`);
      expect(one.status).toBe(200);
      expect(one.body.nextRuns.length).toBeGreaterThanOrEqual(date === '-01-01' ? 7 : 1);
      expect(one.body.nextRuns.length).toBeLessThan(10);
      expect(one.body.nextRuns.every((at: number) => new Date(at).toISOString().slice(4, 10) === date)).toBe(true);
      expect(one.body.nextRunsNote).toMatch(/8 years/);
      const listed = await node.call('GET', '/schedules');
      expect(listed.status).toBe(200);
      expect(listed.body.find((s: { id: string }) => s.id === id).nextRuns).toEqual([one.body.nextRuns[0]]);
    }
  });

  it('refuses a stale expectedRevision with 409 REVISION_CONFLICT and changes nothing; a current one is applied', async () => {
    const { revision } = (await node.call('GET', '/schedules/report-acme')).body;
    const stale = await node.call('PUT', `/schedules/report-acme?expectedRevision=${revision - 1}`, { body: { ...DAILY, cron: '0 0 3 * * *' } });
    expect(stale).toMatchObject({ status: 409, body: { statusCode: 409, schedule: 'report-acme', reason: 'REVISION_CONFLICT', expectedRevision: revision - 1, actualRevision: revision } });
    expect(stale.body.message).toContain('nothing was changed');
    expect((await node.call('GET', '/schedules/report-acme')).body).toMatchObject({ revision, definition: { cron: '0 30 2 * * *' } });
    // In the body as well as the query; 0 means "must not exist yet".
    expect(await node.call('PUT', '/schedules/report-acme', { body: { ...DAILY, expectedRevision: 0 } })).toMatchObject({ status: 409, body: { reason: 'REVISION_CONFLICT', actualRevision: revision } });
    for (const action of ['pause', 'resume']) {
      expect(await node.call('POST', `/schedules/report-acme/${action}?expectedRevision=${revision + 1}`)).toMatchObject({ status: 409, body: { reason: 'REVISION_CONFLICT' } });
    }
    expect(await node.call('DELETE', `/schedules/report-acme?expectedRevision=${revision + 1}`)).toMatchObject({ status: 409, body: { reason: 'REVISION_CONFLICT' } });
    expect((await node.call('GET', '/schedules/report-acme')).body).toMatchObject({ revision, definition: { paused: false } });

    const edited = await node.call('PUT', `/schedules/report-acme?expectedRevision=${revision}`, { body: { ...DAILY, cron: '0 0 3 * * *' } });
    expect(edited).toMatchObject({ status: 200, body: { outcome: 'updated', revision: revision + 1, schedule: { definition: { cron: '0 0 3 * * *' } } } });
  });

  it('answers 400 naming the field for a bad definition, and stores nothing', async () => {
    const before = await node.schedules.schedules();
    const bad: Array<[string, Record<string, unknown>]> = [
      ['cron', { ...DAILY, cron: 'every day at noon' }],
      ['cron', { ...DAILY, cron: '0 99 * * *' }],
      ['timeZone', { ...DAILY, timeZone: 'Mars/Olympus_Mons' }],
      ['handler', { ...DAILY, handler: '' }],
      ['handler', { ...DAILY, handler: 42 }],
      ['data', { ...DAILY, data: { blob: 'x'.repeat(70_000) } }],
      ['duration', { ...DAILY, duration: 'soon' }],
      ['duration', { cron: DAILY.cron, handler: DAILY.handler }],
      ['permits', { ...DAILY, permits: 0 }],
      ['groupPattern', { ...DAILY, groupPattern: '(' }],
      ['acquirerPattern', { ...DAILY, acquirerPattern: '[' }],
      ['cronn', { ...DAILY, cronn: '* * * * *' }],
      ['id', { ...DAILY, id: 'report-other' }],
      ['expectedRevision', { ...DAILY, expectedRevision: -1 }],
    ];
    for (const [field, body] of bad) {
      const answer = await node.call('PUT', '/schedules/report-new', { body });
      expect([field, answer.status, answer.body.field, answer.body.schedule]).toEqual([field, 400, field, 'report-new']);
      expect(answer.body.message).toContain(`invalid ${field}`);
    }
    expect(await node.call('PUT', '/schedules/report-new', { body: [DAILY] })).toMatchObject({ status: 400, body: { field: 'definition' } });
    expect(await node.call('PUT', '/schedules/report-new?expectedRevision=abc', { body: DAILY })).toMatchObject({ status: 400, body: { field: 'expectedRevision' } });
    expect(await node.call('POST', '/schedules/report-acme/pause?expectedRevision=1.5')).toMatchObject({ status: 400, body: { field: 'expectedRevision' } });
    // A body that is not JSON at all never reaches the catalog.
    expect((await node.call('PUT', '/schedules/report-new', { raw: '{"cron": "0 0 * * *", data: nope}' })).status).toBe(400);
    expect(await node.schedules.schedules()).toEqual(before);
  });

  it('pauses and resumes (no next fire while paused), removes, and answers 404 UNKNOWN_SCHEDULE for an id with no schedule', async () => {
    const paused = await node.call('POST', '/schedules/report-acme/pause');
    expect(paused).toMatchObject({ status: 200, body: { outcome: 'updated', schedule: { definition: { paused: true } } } });
    expect(await node.call('POST', '/schedules/report-acme/pause')).toMatchObject({ status: 200, body: { outcome: 'unchanged', revision: paused.body.revision } });
    expect((await node.call('GET', '/schedules/report-acme')).body).toMatchObject({ definition: { paused: true }, nextRuns: [] });
    const resumed = await node.call('POST', `/schedules/report-acme/resume?expectedRevision=${paused.body.revision}`);
    expect(resumed).toMatchObject({ status: 200, body: { outcome: 'updated', revision: paused.body.revision + 1, schedule: { definition: { paused: false } } } });
    expect((await node.call('GET', '/schedules/report-acme')).body.nextRuns).toHaveLength(10);

    const removed = await node.call('DELETE', '/schedules/report-acme');
    expect(removed).toMatchObject({ status: 200, body: { id: 'report-acme', outcome: 'removed', revision: resumed.body.revision + 1 } });
    expect(removed.body.schedule).toBeUndefined();
    expect(await node.call('DELETE', '/schedules/report-acme')).toMatchObject({ status: 200, body: { outcome: 'unchanged' } });
    for (const [method, path] of [['GET', ''], ['POST', '/pause'], ['POST', '/resume']]) {
      expect(await node.call(method, `/schedules/report-acme${path}`)).toMatchObject({ status: 404, body: { schedule: 'report-acme', reason: 'UNKNOWN_SCHEDULE' } });
    }
    expect((await node.call('GET', '/schedules')).body.map((s: { id: string }) => s.id)).not.toContain('report-acme');
  });

  it("shows a schedule's last run from the job history kept under its id", async () => {
    await node.call('PUT', '/schedules/report-every-second', { body: { ...DAILY, cron: '* * * * * *', data: { tenant: 'initech' } } });
    try {
      const listed = await eventually('the last run in the listing', async () => {
        const { body } = await node.call('GET', '/schedules');
        return body.find((s: { id: string; lastRun?: unknown }) => s.id === 'report-every-second' && s.lastRun);
      }, { timeoutMs: 10_000 });
      expect(listed.lastRun).toMatchObject({ job: 'report-every-second', trigger: 'schedule', node: 'schedules-node', outcome: 'completed' });
      expect(node.reports.runs).toContain('initech');
    } finally {
      await node.call('DELETE', '/schedules/report-every-second');
    }
  });

  it('needs what the other admin routes need: the token, and for a change from the console its header', async () => {
    expect((await node.call('GET', '/schedules', { token: null })).status).toBe(401);
    expect((await node.call('GET', '/schedules/report-guarded', { token: 'wrong-token-of-the-same-size-0123' })).status).toBe(403);
    for (const [method, path, body] of [['PUT', '', DAILY], ['DELETE', '', undefined], ['POST', '/pause', undefined], ['POST', '/resume', undefined]] as const) {
      expect([method, path, (await node.call(method, `/schedules/report-guarded${path}`, { body, token: null })).status]).toEqual([method, path, 401]);
      expect([method, path, (await node.call(method, `/schedules/report-guarded${path}`, { body, token: 'wrong-token-of-the-same-size-0123' })).status]).toEqual([method, path, 403]);
    }
    const signedIn = await node.call('POST', '/console/session', { body: { token: TOKEN }, token: null });
    const session = { cookie: signedIn.headers.get('set-cookie')!.split(';')[0] };
    expect((await node.call('GET', '/schedules', { token: null, headers: session })).status).toBe(200);
    // A change by cookie alone (what a cross-site form could send) is refused; with the console's header it is made.
    expect((await node.call('PUT', '/schedules/report-guarded', { body: DAILY, token: null, headers: session })).status).toBe(403);
    expect(await node.schedules.schedule('report-guarded')).toBeUndefined();
    expect((await node.call('PUT', '/schedules/report-guarded', { body: DAILY, token: null, headers: { ...session, 'x-gatekeeper-console': '1' } })).status).toBe(200);
    expect(await node.schedules.schedule('report-guarded')).toMatchObject({ id: 'report-guarded' });
  });
});

describe('admin API: runtime schedules on Fastify, on a real member', () => {
  it('routes encoded ids the same, and one node sees what another wrote, conflicts included', async () => {
    const mapPrefix = uniquePrefix('schedules-api');
    const hazelcast = { clientConfig: testClientConfig(), mapPrefix };
    const a = await startApp({ hazelcast, identity: { acquirer: 'schedules-a', group: 'production' } }, 'fastify');
    const b = await startApp({ hazelcast, identity: { acquirer: 'schedules-b', group: 'production' } });
    try {
      expect(a.app.getHttpAdapter().getType()).toBe('fastify');
      const id = 'tenant:acme/daily report.v2';
      const path = `/schedules/${encodeURIComponent(id)}`;
      const created = await a.call('PUT', path, { body: DAILY });
      expect(created).toMatchObject({ status: 200, body: { id, outcome: 'created' } });
      // b reads it from the cluster, edits it against the revision it read, and a's stale edit then conflicts.
      expect(await b.call('GET', path)).toMatchObject({ status: 200, body: { id, revision: created.body.revision, updatedBy: 'schedules-a' } });
      expect(await b.call('POST', `${path}/pause?expectedRevision=${created.body.revision}`)).toMatchObject({ status: 200, body: { outcome: 'updated' } });
      expect(await a.call('PUT', `${path}?expectedRevision=${created.body.revision}`, { body: { ...DAILY, cron: '0 0 4 * * *' } })).toMatchObject({ status: 409, body: { schedule: id, reason: 'REVISION_CONFLICT' } });
      expect(await a.call('GET', path)).toMatchObject({ status: 200, body: { definition: { paused: true, cron: '0 30 2 * * *' }, updatedBy: 'schedules-b', nextRuns: [] } });
      expect(await a.call('PUT', path, { body: { ...DAILY, cron: 'nope' } })).toMatchObject({ status: 400, body: { field: 'cron', schedule: id } });
      expect(await a.call('DELETE', path)).toMatchObject({ status: 200, body: { outcome: 'removed' } });
      expect(await b.call('POST', `${path}/resume`)).toMatchObject({ status: 404, body: { reason: 'UNKNOWN_SCHEDULE' } });
    } finally {
      await Promise.all([a.app.close(), b.app.close()]);
    }
  });
});
