import { Injectable, type INestApplication, type Type } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { HealthController } from '../../examples/health.controller';
import { ReportJobs } from '../../examples/report.jobs';
import { ClusterSingleton, GatekeeperHealthIndicator, GatekeeperModule, InvalidInputError, ScheduleService, type GatekeeperModuleOptions } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

@Injectable()
class UndefinedJob {
  @ClusterSingleton('never-defined')
  run(): void {}
}

/**
 * The Terminus health indicator, through the guide's controller (docs/observability.md) on a real member: readiness, liveness and the
 * jobs check, with their details, and each one down for the reason it is meant to report.
 */
describe('GatekeeperHealthIndicator with @nestjs/terminus (real member)', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** Starts a node with the example's health routes; returns a GET of one of them (status and JSON body). */
  async function start(options: GatekeeperModuleOptions, providers: Type[] = []) {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), GatekeeperModule.forRoot({ membership: { interval: '200ms' }, ...options })],
      controllers: [HealthController],
      providers,
    }).setLogger(new CapturingLogger()).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    return async (path: 'ready' | 'live' | 'jobs') => {
      const response = await fetch(`${base}/health/${path}`);
      return { status: response.status, body: (await response.json()) as { status: string; details: Record<string, Record<string, unknown>> } };
    };
  }
  const hazelcast = () => ({ clientConfig: testClientConfig(), mapPrefix: uniquePrefix('health') });

  it('is ready, live and has every job runnable on a started node, with the cluster’s details', async () => {
    const get = await start({ identity: { acquirer: 'node-a', group: 'blue' }, hazelcast: hazelcast(), quorum: 1, definitions: [{ name: 'report', duration: '5s' }] });
    const ready = await eventually('participants confirmed', async () => {
      const answer = await get('ready');
      return answer.body.details.gatekeeper?.participants ? answer : undefined;
    });
    expect(ready.status).toBe(200);
    expect(ready.body.details.gatekeeper).toEqual({
      status: 'up', phase: 'ready', connected: true, members: 1, quorum: { required: 1, met: true },
      participants: ['node-a (blue)'], runsNowhere: [], paused: [],
    });
    expect((await get('live')).status).toBe(200);
    expect((await get('jobs')).status).toBe(200);
  });

  it('is not ready below quorum, and stays live (a restart would not bring members back)', async () => {
    const get = await start({ hazelcast: hazelcast(), quorum: 2 });
    const ready = await get('ready');
    expect(ready.status).toBe(503);
    expect(ready.body.details.gatekeeper).toMatchObject({ status: 'down', quorum: { required: 2, met: false }, message: '1 cluster member(s) seen, quorum is 2' });
    expect((await get('live')).status).toBe(200);
  });

  it('reports a job that no live instance can run, apart from a paused one', async () => {
    const get = await start({
      identity: { acquirer: 'node-a', group: 'blue' },
      hazelcast: hazelcast(),
      definitions: [{ name: 'prod-report', duration: '5s', groupPattern: 'production' }, { name: 'stopped', duration: '5s', permits: 0 }, { name: 'anywhere', duration: '5s' }],
    });
    const jobs = await eventually('the jobs check down', async () => {
      const answer = await get('jobs');
      return answer.status === 503 ? answer : undefined;
    });
    expect(jobs.body.details['gatekeeper-jobs']).toMatchObject({ runsNowhere: ['prod-report'], paused: ['stopped'], message: 'no live instance can run "prod-report"' });
    expect((await get('ready')).status).toBe(200); // not a reason to take the node out of traffic
  });

  it('is not live once a start in the background gave up (only a restart helps then)', async () => {
    // A job on a semaphore nobody defined, with autoDefine off: the background start fails when it checks the job.
    const get = await start({ connectInBackground: true, autoDefine: false, hazelcast: hazelcast() }, [UndefinedJob]);
    const live = await eventually('the start to give up', async () => {
      const answer = await get('live');
      return answer.status === 503 ? answer : undefined;
    });
    expect(live.body.details.gatekeeper).toMatchObject({ status: 'down', phase: 'starting', message: expect.stringContaining('its start gave up') });
    expect(live.body.details.gatekeeper.message).toContain('never-defined');
    expect((await get('ready')).body.details.gatekeeper.message).toEqual(expect.stringContaining('its start gave up'));
  });

  it('answers with the memory store too: ready, no members or quorum to report', async () => {
    const get = await start({ backend: 'memory', membership: false });
    const ready = await get('ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details.gatekeeper).toEqual({ status: 'up', phase: 'ready', connected: true, runsNowhere: [], paused: [] });
  });
});

@Injectable()
class FlakyJob {
  @ClusterSingleton('health-flaky', '5s')
  async run(): Promise<void> {
    throw new Error('the bank said no');
  }
}

/** One job's health from the cluster's history, through the guide's route (`/health/nightly-report`) and the indicator. */
describe('GatekeeperHealthIndicator.job (real member)', () => {
  let app: INestApplication;
  let get: () => Promise<{ status: number; body: { details: Record<string, Record<string, unknown>> } }>;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), GatekeeperModule.forRoot({ membership: false, hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('job-health') } })],
      controllers: [HealthController],
      providers: [ReportJobs, FlakyJob],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    get = async () => {
      const response = await fetch(`${base}/health/nightly-report`);
      return { status: response.status, body: (await response.json()) as { details: Record<string, Record<string, unknown>> } };
    };
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is down until the job completed a run, then up with when', async () => {
    const before = await get();
    expect(before.status).toBe(503);
    expect(before.body.details['gatekeeper-job']).toMatchObject({ status: 'down', job: 'ReportJobs.nightly', paused: false, failuresSince: 0, message: 'no completed run of ReportJobs.nightly in its history' });
    const started = Date.now();
    await app.get(ReportJobs).nightly();
    const after = await get();
    expect(after.status).toBe(200);
    expect(after.body.details['gatekeeper-job']).toMatchObject({ status: 'up', job: 'ReportJobs.nightly', failuresSince: 0 });
    expect(after.body.details['gatekeeper-job'].lastSuccessAt).toBeGreaterThanOrEqual(started);
  });

  it('is down once its last success is older than within, says what failed since, and is up while paused', async () => {
    const health = app.get(GatekeeperHealthIndicator);
    await app.get(ReportJobs).nightly();
    const completedAt = Date.now();
    const stale = await eventually('the success older than 50 ms', async () => {
      const answer = await health.job('ReportJobs.nightly', { within: '50ms' });
      return Date.now() - completedAt > 50 && answer['gatekeeper-job'].status === 'down' ? answer : undefined;
    });
    expect(stale['gatekeeper-job'].message).toMatch(/^ReportJobs\.nightly last completed \d+ s ago \(.+\), more than 0\.05 s$/);
    await expect(app.get(FlakyJob).run()).rejects.toThrow('the bank said no');
    await expect(app.get(FlakyJob).run()).rejects.toThrow('the bank said no');
    const flaky = (await health.job('FlakyJob.run', { within: '1h', key: 'flaky' })).flaky;
    expect(flaky).toMatchObject({ status: 'down', failuresSince: 2, lastFailure: { outcome: 'failed', error: 'the bank said no' } });
    expect(flaky.message).toBe('no completed run of FlakyJob.run in its history; 2 run(s) since ended otherwise, the newest failed: the bank said no');
    await app.get(ScheduleService).pauseJob('ReportJobs.nightly');
    expect((await health.job('ReportJobs.nightly', { within: '50ms' }))['gatekeeper-job']).toMatchObject({ status: 'up', paused: true });
  });

  it('refuses a bad within before reading anything, naming the job and the field', async () => {
    const health = app.get(GatekeeperHealthIndicator);
    await expect(health.job('ReportJobs.nightly', { within: 'soon' })).rejects.toThrow(InvalidInputError);
    await expect(health.job('ReportJobs.nightly', { within: 'soon' })).rejects.toThrow(/^Job "ReportJobs\.nightly": invalid within: /);
  });
});
