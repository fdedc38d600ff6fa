import { Injectable, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { Registry, register } from 'prom-client';
import {
  ClusterService, ClusterSingleton, GatekeeperModule, GatekeeperService, InvalidInputError, SemaphoreAdminService, TaskHandler, TaskService, type GatekeeperModuleOptions,
} from '../../lib';
import { MetricsController } from '../../examples/metrics.module';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

@Injectable()
class ReportJob {
  runs = 0;

  @ClusterSingleton('report', '5s')
  async run(): Promise<void> {
    this.runs++;
  }
}

@Injectable()
class EverySecond {
  runs = 0;

  @Cron('* * * * * *')
  @ClusterSingleton('metrics-every-second', '5s')
  async tick(): Promise<void> {
    this.runs++;
  }
}

@Injectable()
class FlakyJob {
  fail = true;

  @ClusterSingleton('metrics-flaky', '5s')
  async run(): Promise<void> {
    if (this.fail) throw new Error('the ledger is locked');
  }
}

@Injectable()
class Exports {
  @TaskHandler('export')
  export(): string {
    return 'ok';
  }
}

/** The value of one series in prom-client's text output, or `undefined` when it has none. */
function sample(text: string, metric: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const inside = line.slice(metric.length + 1, line.lastIndexOf('}'));
    if (wanted.every((pair) => inside.split(',').includes(pair))) return Number(line.slice(line.lastIndexOf('}') + 1));
  }
  return undefined;
}

/**
 * Prometheus metrics through prom-client, on a real member: each family moves with what it counts, on the path
 * production uses (a decorated job, a manual permit, an election, a task), and two modules in one process share
 * the default registry's instruments (registered once) with a series each.
 */
describe('metrics (prom-client, real member)', () => {
  const contexts: INestApplicationContext[] = [];
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  async function start(options: GatekeeperModuleOptions, providers: Type[] = [], imports: DynamicModule[] = []): Promise<INestApplicationContext> {
    const moduleRef = await Test.createTestingModule({
      imports: [...imports, GatekeeperModule.forRoot({ hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('metrics') }, membership: false, ...options })],
      providers,
    }).setLogger(new CapturingLogger()).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    contexts.push(app);
    await app.init();
    return app;
  }

  it('times how late each scheduled tick started after its instant, and says when a job last completed', async () => {
    const registry = new Registry();
    const app = await start({ identity: { acquirer: 'cron-node' }, metrics: { registry } }, [EverySecond], [ScheduleModule.forRoot()]);
    const labels = { node: 'cron-node', semaphore: 'metrics-every-second', job: 'EverySecond.tick' };
    const text = await eventually('two ticks timed', async () => {
      const metrics = await registry.metrics();
      return (sample(metrics, 'gatekeeper_job_start_lateness_seconds_count', labels) ?? 0) >= 2 ? metrics : undefined;
    }, { timeoutMs: 15_000 });
    const count = sample(text, 'gatekeeper_job_start_lateness_seconds_count', labels)!;
    // Seconds, not milliseconds: a tick on an idle node starts well within a second of its instant.
    expect(sample(text, 'gatekeeper_job_start_lateness_seconds_sum', labels)! / count).toBeLessThan(1);
    expect(sample(text, 'gatekeeper_job_start_lateness_seconds_bucket', { ...labels, le: '30' })).toBe(count);
    const lastSuccess = sample(text, 'gatekeeper_job_last_success_timestamp_seconds', labels)!;
    expect(Math.abs(lastSuccess - Date.now() / 1000)).toBeLessThan(10);
    expect(app.get(EverySecond).runs).toBeGreaterThanOrEqual(2);
  });

  it('says how many runs of a job failed in a row on any node, from the run history, and 0 once one completed', async () => {
    const registry = new Registry();
    const app = await start({ identity: { acquirer: 'flaky-node' }, metrics: { registry }, schedules: { history: { flushInterval: '100ms' } } }, [FlakyJob]);
    const labels = { node: 'flaky-node', semaphore: 'metrics-flaky', job: 'FlakyJob.run' };
    const job = app.get(FlakyJob);
    for (let i = 0; i < 2; i++) await expect(job.run()).rejects.toThrow('the ledger is locked');
    await eventually('two failures in a row', async () => sample(await registry.metrics(), 'gatekeeper_job_consecutive_failures', labels) === 2, { timeoutMs: 10_000 });
    job.fail = false;
    await job.run();
    await eventually('none once a run completed', async () => sample(await registry.metrics(), 'gatekeeper_job_consecutive_failures', labels) === 0, { timeoutMs: 10_000 });
  });

  it('counts decisions, runs, held permits, leadership, tasks, lease losses and store calls', async () => {
    const registry = new Registry();
    const app = await start({
      identity: { acquirer: 'm-node' },
      metrics: { registry, taskCountsInterval: '100ms' },
      elections: ['leader'],
      definitions: [{ name: 'stopped', duration: '5s', permits: 0 }, { name: 'manual', duration: '5s' }],
    }, [ReportJob, Exports]);
    const node = 'm-node';
    const job = app.get(ReportJob);
    await job.run(); // a tick: granted, runs
    await app.get(SemaphoreAdminService).pause('report');
    await job.run(); // the next tick: the permit it held is lost
    expect(job.runs).toBe(1);
    expect((await app.get(GatekeeperService).tryAcquire('stopped')).granted).toBe(false);
    const held = await app.get(GatekeeperService).withPermit('manual', async () => sample(await registry.metrics(), 'gatekeeper_permits_held', { node, semaphore: 'manual' }));
    expect(held).toMatchObject({ ran: true, value: 1 });
    await app.get(ClusterService).waitForLeader({ election: 'leader', timeout: '10s' });
    await app.get(TaskService).submit({ type: 'export', name: 'daily' });
    await eventually('the task done', async () => (await app.get(TaskService).get('export:daily'))?.state === 'done');

    const text = await eventually('the task counted', async () => {
      const metrics = await registry.metrics();
      return sample(metrics, 'gatekeeper_tasks', { node, type: 'export', state: 'done' }) === 1 ? metrics : undefined;
    });
    expect(sample(text, 'gatekeeper_permit_granted_total', { node, semaphore: 'report', outcome: 'granted' })).toBe(1);
    expect(sample(text, 'gatekeeper_permit_denied_total', { node, semaphore: 'report', reason: 'PAUSED' })).toBe(1);
    expect(sample(text, 'gatekeeper_permit_denied_total', { node, semaphore: 'stopped', reason: 'PAUSED' })).toBe(1);
    expect(sample(text, 'gatekeeper_permit_attempts_total', { node, semaphore: 'report' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'gatekeeper_job_run_duration_seconds_count', { node, semaphore: 'report', job: 'ReportJob.run', outcome: 'finished' })).toBe(1);
    expect(sample(text, 'gatekeeper_job_seconds_since_last_run', { node, semaphore: 'report', job: 'ReportJob.run' })).toBeLessThan(60);
    expect(sample(text, 'gatekeeper_lease_lost_total', { node, kind: 'permit' })).toBe(1);
    expect(sample(text, 'gatekeeper_leader', { node, election: 'leader' })).toBe(1);
    expect(sample(text, 'gatekeeper_store_call_duration_seconds_count', { node, store: 'permits', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sample(text, 'gatekeeper_store_call_duration_seconds_count', { node, store: 'tasks', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sample(text, 'gatekeeper_permits_held', { node, semaphore: 'manual' })).toBeUndefined(); // released

    // The guide's table (docs/observability.md, Metrics) names exactly what is registered, and the example dashboard
    // asks only for those.
    const registered = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    const page = readFileSync(join(__dirname, '../../docs/observability.md'), 'utf8');
    const table = page.slice(page.indexOf('## Metrics'), page.indexOf('## Tracing'));
    expect([...table.matchAll(/^\| `(gatekeeper_[a-z_]+)` \|/gm)].map((m) => m[1]).sort()).toEqual(registered);
    const dashboard = readFileSync(join(__dirname, '../../docs/grafana/gatekeeper-dashboard.json'), 'utf8');
    const asked = new Set([...dashboard.matchAll(/gatekeeper_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, '')));
    expect([...asked].filter((name) => !registered.includes(name))).toEqual([]);
  });

  it('registers once per process: two modules on the default registry share the instruments, a series each', async () => {
    try {
      const mapPrefix = uniquePrefix('metrics-shared'); // one cluster state: one of the two leads
      const options = (acquirer: string): GatekeeperModuleOptions => ({
        identity: { acquirer }, metrics: true, elections: ['leader'], hazelcast: { clientConfig: testClientConfig(), mapPrefix },
      });
      const a = await start(options('node-a'));
      const b = await start(options('node-b'));
      for (const node of [a, b]) await node.get(ClusterService).waitForLeader({ election: 'leader', timeout: '10s' });
      const text = await register.metrics();
      const leaders = ['node-a', 'node-b'].map((node) => sample(text, 'gatekeeper_leader', { node, election: 'leader' }));
      expect(leaders.sort()).toEqual([0, 1]);
      await contexts.pop()!.close(); // node-b leaves: its series go with it
      expect(sample(await register.metrics(), 'gatekeeper_leader', { node: 'node-b', election: 'leader' })).toBeUndefined();
    } finally {
      register.clear();
    }
  });

  it('serves them over HTTP with the guide’s controller, in Prometheus’ text format', async () => {
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [GatekeeperModule.forRoot({ identity: { acquirer: 'http-node' }, hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('metrics') }, metrics: true })],
        controllers: [MetricsController],
        providers: [ReportJob],
      }).setLogger(new CapturingLogger()).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      contexts.push(app);
      await app.listen(0, '127.0.0.1');
      await app.get(ReportJob).run();
      const response = await fetch(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/metrics`);
      expect(response.headers.get('content-type')).toContain('text/plain');
      const text = await response.text();
      expect(text).toContain('# TYPE gatekeeper_permit_attempts_total counter');
      expect(sample(text, 'gatekeeper_job_run_duration_seconds_count', { node: 'http-node', semaphore: 'report', outcome: 'finished' })).toBe(1);
    } finally {
      await Promise.all(contexts.splice(0).map((c) => c.close()));
      register.clear();
    }
  });

  it('rejects a bad metrics option, naming the field', async () => {
    await expect(start({ metrics: { prefix: 'bad-prefix' } })).rejects.toThrow(InvalidInputError);
    await expect(start({ metrics: { prefix: 'bad-prefix' } })).rejects.toThrow('invalid metrics.prefix');
    await expect(start({ metrics: { registry: {} } })).rejects.toThrow('invalid metrics.registry: must be a prom-client Registry');
  });
});
