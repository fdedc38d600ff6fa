import { Injectable, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Cron } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { ClusterSingleton, GatekeeperModule, SemaphoreAdminService, type GatekeeperModuleOptions } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'jobs-admin-token-0123456789';

/** Jobs the tests tick by calling them (their cron schedules never fire within a test). */
@Injectable()
class BillingJobs {
  runs = 0;
  failNext = false;

  @Cron('0 30 2 * * *', { timeZone: 'Europe/Berlin' })
  @ClusterSingleton('jobs-billing', '10s')
  async charge(): Promise<void> {
    this.runs++;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('the payment provider answered 502');
    }
  }

  @ClusterSingleton('jobs-sweep', '10s')
  async sweep(): Promise<void> {}

  @Cron('0 0 0 1 1 *')
  @ClusterSingleton('jobs-new-year', '10s')
  async newYear(): Promise<void> {}
}

/** An app with the admin API (and console) under `/ops`, listening on a free port; `call` sends the token unless told. */
async function startApp(options: Partial<GatekeeperModuleOptions>, platform: 'express' | 'fastify' = 'express') {
  const moduleRef = await Test.createTestingModule({
    imports: [GatekeeperModule.forRoot({
      identity: { acquirer: 'jobs-node', group: 'production' },
      admin: { path: 'ops', token: TOKEN, console: true },
      schedules: { history: { flushInterval: '200ms' } },
      ...options,
    })],
    providers: [BillingJobs],
  }).setLogger(new CapturingLogger()).compile();
  const app: INestApplication = platform === 'fastify' ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false }) : moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops`;
  const call = async (method: string, path: string, init: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) => {
    const token = init.token === undefined ? TOKEN : init.token;
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...(token !== null && { authorization: `Bearer ${token}` }), ...(init.body !== undefined && { 'content-type': 'application/json' }), ...init.headers },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of many shapes, read by tests
    return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as any };
  };
  return { app, call, jobs: app.get(BillingJobs), semaphores: app.get(SemaphoreAdminService) };
}

describe('admin API: jobs (memory store)', () => {
  let node: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    node = await startApp({ backend: 'memory', membership: false });
  });
  afterAll(async () => {
    await node.app.close();
  });

  it("lists this node's jobs with holder, paused, last run and next run", async () => {
    await node.jobs.charge();
    const { status, body } = await node.call('GET', '/jobs');
    expect(status).toBe(200);
    expect(body.map((j: { job: string }) => j.job)).toEqual(['BillingJobs.charge', 'BillingJobs.newYear', 'BillingJobs.sweep']);
    const [charge, , sweep] = body;
    expect(charge).toMatchObject({
      semaphore: 'jobs-billing', mode: 'hold', paused: false, cron: '0 30 2 * * *', timeZone: 'Europe/Berlin',
      holders: [{ node: 'jobs-node', group: 'production', token: expect.any(Number), expiresAt: expect.any(Number) }],
      lastRun: { job: 'BillingJobs.charge', trigger: 'schedule', node: 'jobs-node', outcome: 'completed' },
    });
    // 02:30 in Berlin is 00:30 or 01:30 UTC, in the future.
    expect(charge.nextRun).toBeGreaterThan(Date.now());
    expect(new Date(charge.nextRun).getUTCMinutes()).toBe(30);
    expect(charge.nextRun).toBe((await node.call('GET', '/jobs/BillingJobs.charge')).body.nextRuns[0]);
    expect(charge.runs).toBeUndefined(); // a listing, not every description
    expect(sweep).toMatchObject({ semaphore: 'jobs-sweep', paused: false, holders: [] });
    expect(sweep.nextRun).toBeUndefined();
  });

  it('describes a yearly job: the fire instants within the cron package\'s 8 years, and why no more', async () => {
    const { status, body } = await node.call('GET', '/jobs/BillingJobs.newYear');
    expect(status).toBe(200);
    expect(body.nextRuns.length).toBeGreaterThanOrEqual(7);
    expect(body.nextRuns.length).toBeLessThan(10);
    expect(body.nextRuns.every((at: number) => new Date(at).toISOString().endsWith('-01-01T00:00:00.000Z'))).toBe(true);
    expect(body.nextRunsNote).toMatch(/8 years/);
    expect((await node.call('GET', '/jobs/BillingJobs.charge')).body.nextRunsNote).toBeUndefined();
  });

  it('describes a job by its dotted name, and answers 404 naming a job this node does not have', async () => {
    const { status, body } = await node.call('GET', '/jobs/BillingJobs.charge');
    expect(status).toBe(200);
    expect(body).toMatchObject({ job: 'BillingJobs.charge', semaphore: 'jobs-billing', definition: { permits: 1, durationMs: 10_000 }, cron: '0 30 2 * * *' });
    expect(body.nextRuns).toHaveLength(10);
    const missing = await node.call('GET', '/jobs/BillingJobs.nope');
    expect(missing).toMatchObject({ status: 404, body: { job: 'BillingJobs.nope', reason: 'UNKNOWN_JOB' } });
    expect(missing.body.message).toContain('BillingJobs.charge, BillingJobs.newYear, BillingJobs.sweep');
  });

  it('answers the history newest first, limited, with the failure; 400 naming a bad limit', async () => {
    node.jobs.failNext = true;
    await node.jobs.charge().catch(() => undefined);
    await node.jobs.charge();
    const all = await node.call('GET', '/jobs/BillingJobs.charge/history');
    expect(all.status).toBe(200);
    expect(all.body.runs.length).toBeGreaterThanOrEqual(3);
    expect(all.body.runs.slice(0, 2).map((r: { outcome: string }) => r.outcome)).toEqual(['completed', 'failed']);
    expect(all.body.lastFailure).toMatchObject({ outcome: 'failed', error: 'the payment provider answered 502' });
    // With its stack, bounded (the Error's first lines: its message, then the frames from the job's own method).
    expect(all.body.lastFailure.stack).toMatch(/^Error: the payment provider answered 502\n {4}at BillingJobs\.charge /);
    expect(all.body.lastFailure.stack.split('\n').filter((line: string) => line.startsWith('    at ')).length).toBeLessThanOrEqual(20);
    expect(all.body.runs[1].stack).toBe(all.body.lastFailure.stack);
    expect(all.body.runs[0].stack).toBeUndefined();
    expect((await node.call('GET', '/jobs/BillingJobs.charge')).body.lastFailure.stack).toBe(all.body.lastFailure.stack);
    const one = await node.call('GET', '/jobs/BillingJobs.charge/history?limit=1');
    expect(one.body.runs).toEqual([all.body.runs[0]]);
    for (const limit of ['0', 'abc', '5000']) {
      expect(await node.call('GET', `/jobs/BillingJobs.charge/history?limit=${limit}`)).toMatchObject({ status: 400, body: { job: 'BillingJobs.charge', field: 'limit' } });
    }
    expect(await node.call('GET', '/jobs/Nobody.knows/history')).toMatchObject({ status: 404, body: { job: 'Nobody.knows' } });
  });

  it('answers a job\'s health from its history: up after a success, down with what failed since; 400 naming within', async () => {
    await node.jobs.charge();
    const up = await node.call('GET', '/jobs/BillingJobs.charge/health?within=1h');
    expect(up).toMatchObject({ status: 200, body: { status: 'up', job: 'BillingJobs.charge', paused: false, failuresSince: 0, lastSuccessAt: expect.any(Number) } });
    node.jobs.failNext = true;
    await node.jobs.charge().catch(() => undefined);
    const down = await eventually('the success older than 5 ms', async () => {
      const answer = await node.call('GET', '/jobs/BillingJobs.charge/health?within=5ms');
      return answer.body.status === 'down' ? answer : undefined;
    });
    expect(down).toMatchObject({ status: 200, body: { status: 'down', failuresSince: 1, lastFailure: { outcome: 'failed', error: 'the payment provider answered 502' } } });
    expect(down.body.message).toMatch(/^BillingJobs\.charge last completed \d+ s ago .*; 1 run\(s\) since ended otherwise, the newest failed: the payment provider answered 502$/);
    for (const within of ['', '?within=soon', '?within=0']) {
      expect(await node.call('GET', `/jobs/BillingJobs.charge/health${within}`)).toMatchObject({ status: 400, body: { job: 'BillingJobs.charge', field: 'within' } });
    }
    expect(await node.call('GET', '/jobs/Nobody.knows/health?within=1h')).toMatchObject({ status: 404, body: { job: 'Nobody.knows' } });
  });

  it('runs a job now (200 with where and under which token), marked manual in the history', async () => {
    const before = node.jobs.runs;
    const started = await node.call('POST', '/jobs/BillingJobs.charge/run');
    expect(started).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', node: 'jobs-node', token: expect.any(Number), requestId: expect.any(String) } });
    await eventually('the manual run', () => node.jobs.runs === before + 1);
    const history = (await node.call('GET', '/jobs/BillingJobs.charge/history?limit=1')).body;
    expect(history.runs[0]).toMatchObject({ trigger: 'manual', request: started.body.requestId, token: started.body.token });
    // A timeout in the body is taken; any other key is a 400 naming it, and nothing runs.
    expect((await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { timeout: '5s' } })).status).toBe(200);
    const runs = node.jobs.runs;
    expect(await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { timout: '5s' } })).toMatchObject({ status: 400, body: { field: 'timout' } });
    expect(await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { timeout: 'soon' } })).toMatchObject({ status: 400, body: { field: 'timeout' } });
    expect(await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { timeout: '1h' } })).toMatchObject({ status: 400, body: { field: 'timeout' } });
    expect(node.jobs.runs).toBe(runs);
  });

  it('with wait, answers once the run ended, with its outcome: completed, or failed with the error and its stack', async () => {
    const completed = await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { wait: '10s' } });
    expect(completed).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', outcome: 'completed', durationMs: expect.any(Number) } });
    node.jobs.failNext = true;
    const failed = await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { wait: '10s' } });
    expect(failed).toMatchObject({ status: 200, body: { outcome: 'failed', error: 'the payment provider answered 502' } });
    // With its stack, as the history keeps it: where it failed, without opening the job's details.
    expect(failed.body.stack).toMatch(/^Error: the payment provider answered 502\n {4}at BillingJobs\.charge /);
    expect(await node.call('POST', '/jobs/BillingJobs.charge/run', { body: { wait: '1h' } })).toMatchObject({ status: 400, body: { field: 'wait' } });
  });

  it('refuses a run now: 404 for an unknown job, 409 with the reason code for a paused one', async () => {
    const runs = node.jobs.runs;
    const unknown = await node.call('POST', '/jobs/BillingJobs.nope/run');
    expect(unknown).toMatchObject({ status: 404, body: { job: 'BillingJobs.nope', reason: 'UNKNOWN_JOB' } });
    await node.semaphores.pause('jobs-billing');
    try {
      const paused = await node.call('POST', '/jobs/BillingJobs.charge/run');
      expect(paused).toMatchObject({ status: 409, body: { statusCode: 409, error: 'Conflict', job: 'BillingJobs.charge', reason: 'PAUSED' } });
      expect(paused.body.message).toContain('paused');
      const listed = (await node.call('GET', '/jobs')).body[0];
      expect(listed).toMatchObject({ job: 'BillingJobs.charge', paused: true });
      // A paused job fires nowhere: no next run is shown, in the listing or the description.
      expect(listed.nextRun).toBeUndefined();
      expect((await node.call('GET', '/jobs/BillingJobs.charge')).body).toMatchObject({ paused: true, nextRuns: [] });
    } finally {
      await node.semaphores.resume('jobs-billing');
    }
    expect(node.jobs.runs).toBe(runs);
  });

  it('pauses a job by its name (its semaphore, the permits remembered) and resumes it: the listing follows', async () => {
    const paused = await node.call('POST', '/jobs/BillingJobs.charge/pause');
    expect(paused).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', paused: true, by: 'semaphore', semaphore: 'jobs-billing', permits: 0, alsoAffected: [] } });
    expect(await node.semaphores.readDefinition('jobs-billing')).toMatchObject({ permits: 0, pausedFrom: 1 });
    const listed = (await node.call('GET', '/jobs')).body;
    expect(listed.map((j: { job: string; paused: boolean }) => [j.job, j.paused])).toEqual([['BillingJobs.charge', true], ['BillingJobs.newYear', false], ['BillingJobs.sweep', false]]);
    expect(listed[0].nextRun).toBeUndefined();
    // Pausing again changes nothing; a run now is refused as paused.
    expect(await node.call('POST', '/jobs/BillingJobs.charge/pause')).toMatchObject({ status: 200, body: { paused: true, permits: 0 } });
    expect(await node.call('POST', '/jobs/BillingJobs.charge/run')).toMatchObject({ status: 409, body: { reason: 'PAUSED' } });

    const resumed = await node.call('POST', '/jobs/BillingJobs.charge/resume');
    expect(resumed).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', paused: false, by: 'semaphore', semaphore: 'jobs-billing', permits: 1, alsoAffected: [] } });
    const [charge] = (await node.call('GET', '/jobs')).body;
    expect(charge).toMatchObject({ job: 'BillingJobs.charge', paused: false, nextRun: expect.any(Number) });
  });

  it('refuses a pause or resume of an unknown job (404 naming it) or with a bad force (400), changing nothing', async () => {
    for (const action of ['pause', 'resume']) {
      const unknown = await node.call('POST', `/jobs/BillingJobs.nope/${action}`);
      expect(unknown).toMatchObject({ status: 404, body: { job: 'BillingJobs.nope', reason: 'UNKNOWN_JOB' } });
      expect(unknown.body.message).toContain('No job "BillingJobs.nope"');
      expect(await node.call('POST', `/jobs/BillingJobs.charge/${action}?force=yes`)).toMatchObject({ status: 400, body: { job: 'BillingJobs.charge', field: 'force' } });
    }
    expect((await node.semaphores.readDefinition('jobs-billing')).permits).toBe(1);
    // force=true is taken (a @ClusterSingleton job's semaphore needs none).
    expect(await node.call('POST', '/jobs/BillingJobs.sweep/pause?force=true')).toMatchObject({ status: 200, body: { semaphore: 'jobs-sweep', paused: true } });
    expect(await node.call('POST', '/jobs/BillingJobs.sweep/resume?force=false')).toMatchObject({ status: 200, body: { semaphore: 'jobs-sweep', paused: false } });
  });

  it('needs what the other admin routes need: the token, and for a run from the console its header', async () => {
    const runs = node.jobs.runs;
    expect((await node.call('GET', '/jobs', { token: null })).status).toBe(401);
    expect((await node.call('GET', '/jobs/BillingJobs.charge/history', { token: 'wrong-token-of-the-same-size' })).status).toBe(403);
    expect((await node.call('POST', '/jobs/BillingJobs.charge/run', { token: null })).status).toBe(401);
    const signedIn = await node.call('POST', '/console/session', { body: { token: TOKEN }, token: null });
    const session = { cookie: signedIn.headers.get('set-cookie')!.split(';')[0] };
    expect((await node.call('GET', '/jobs', { token: null, headers: session })).status).toBe(200);
    // A change by cookie alone (what a cross-site form could send) is refused; with the console's header it is made.
    expect((await node.call('POST', '/jobs/BillingJobs.charge/run', { token: null, headers: session })).status).toBe(403);
    expect(node.jobs.runs).toBe(runs);
    expect((await node.call('POST', '/jobs/BillingJobs.charge/run', { token: null, headers: { ...session, 'x-gatekeeper-console': '1' } })).status).toBe(200);
    // So are a pause and a resume.
    expect((await node.call('POST', '/jobs/BillingJobs.charge/pause', { token: null })).status).toBe(401);
    expect((await node.call('POST', '/jobs/BillingJobs.charge/pause', { token: null, headers: session })).status).toBe(403);
    expect((await node.semaphores.readDefinition('jobs-billing')).permits).toBe(1);
    expect((await node.call('POST', '/jobs/BillingJobs.charge/pause', { token: null, headers: { ...session, 'x-gatekeeper-console': '1' } })).body).toMatchObject({ paused: true });
    expect((await node.call('POST', '/jobs/BillingJobs.charge/resume', { token: null, headers: { ...session, 'x-gatekeeper-console': '1' } })).body).toMatchObject({ paused: false });
  });
});

describe('admin API: jobs on Fastify (memory store)', () => {
  it('routes dotted job names the same', async () => {
    const node = await startApp({ backend: 'memory', membership: false }, 'fastify');
    try {
      expect(node.app.getHttpAdapter().getType()).toBe('fastify');
      expect(await node.call('GET', '/jobs/BillingJobs.charge')).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', semaphore: 'jobs-billing' } });
      expect(await node.call('GET', '/jobs/BillingJobs.charge/history?limit=1')).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', runs: [] } });
      expect(await node.call('POST', '/jobs/BillingJobs.charge/run')).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', node: 'jobs-node' } });
      expect(await node.call('POST', '/jobs/BillingJobs.nope/run')).toMatchObject({ status: 404, body: { reason: 'UNKNOWN_JOB' } });
      expect(await node.call('POST', '/jobs/BillingJobs.charge/pause')).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', paused: true } });
      expect(await node.call('POST', '/jobs/BillingJobs.charge/resume')).toMatchObject({ status: 200, body: { job: 'BillingJobs.charge', paused: false } });
    } finally {
      await node.app.close();
    }
  });
});

describe('admin API: jobs on a real member', () => {
  it("answers one node's run now from another node's history, through the cluster", async () => {
    const mapPrefix = uniquePrefix('jobs-api');
    const hazelcast = { clientConfig: testClientConfig(), mapPrefix };
    const a = await startApp({ hazelcast, identity: { acquirer: 'jobs-a', group: 'production' } });
    const b = await startApp({ hazelcast, identity: { acquirer: 'jobs-b', group: 'production' } });
    try {
      await a.jobs.charge(); // a holds the job now
      await b.jobs.charge();
      expect([a.jobs.runs, b.jobs.runs]).toEqual([1, 0]);
      const started = await b.call('POST', '/jobs/BillingJobs.charge/run');
      expect(started).toMatchObject({ status: 200, body: { node: 'jobs-a' } });
      await eventually('the manual run on the holder', () => a.jobs.runs === 2);
      // b reads what a wrote: the history is the cluster's, not the answering node's.
      const history = await eventually('the manual run in the history b reads', async () => {
        const { body } = await b.call('GET', '/jobs/BillingJobs.charge/history');
        return body.runs.length === 2 && body.runs.every((r: { outcome: string }) => r.outcome === 'completed') ? body : undefined;
      }, { timeoutMs: 10_000 });
      expect(history.runs.map((r: { trigger: string; node: string }) => [r.trigger, r.node])).toEqual([['manual', 'jobs-a'], ['schedule', 'jobs-a']]);
      expect(history.skipped).toEqual({ NO_PERMIT_AVAILABLE: 1 });
      const [listed] = (await b.call('GET', '/jobs')).body;
      expect(listed).toMatchObject({ job: 'BillingJobs.charge', holders: [{ node: 'jobs-a', token: started.body.token }], lastRun: { trigger: 'manual' } });
      expect(b.jobs.runs).toBe(0);
    } finally {
      await Promise.all([a.app.close(), b.app.close()]);
    }
  });
});
