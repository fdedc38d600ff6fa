import { Injectable } from '@nestjs/common';
import { ClusterSingleton, InvalidInputError, ScheduleHandler, ScheduleService } from '../../lib';
import { resolveClusterSingletonOptions } from '../../lib/nest/schedules/cluster-singleton.options';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { CheckInMonitor as Monitor } from '../support/check-in-monitor';
import { eventually } from '../support/eventually';
import { declareTestPrefix, testBackendOptions, type TestBackend } from '../support/test-backends';
import { uniquePrefix } from '../support/test-cluster';

const monitor = new Monitor();

/** The jobs, made once the monitor listens (a decorator's options are read when its class is made). */
function checkedJobs(hcUrl: string, ownUrl: string) {
  @Injectable()
  class CheckedJobs {
    calls = 0;

    @ClusterSingleton({ semaphore: 'checked-report', duration: '30s', checkIn: { healthchecks: hcUrl, timeout: '5s' } })
    async report(): Promise<void> {
      this.calls++;
    }

    @ClusterSingleton({ semaphore: 'checked-fail', duration: '30s', checkIn: { healthchecks: hcUrl, timeout: '5s' } })
    async fail(): Promise<void> {
      throw new Error('the ledger is closed');
    }

    @ClusterSingleton({ semaphore: 'checked-own', duration: '30s', checkIn: { success: `${ownUrl}/done/{run}` } })
    async own(): Promise<void> {}
  }
  return CheckedJobs;
}

/** A runtime schedule's handler. */
@Injectable()
class RuntimeHandlers {
  runs = 0;

  @ScheduleHandler('checked-runtime')
  run(): void {
    this.runs++;
  }
}

/**
 * Check-ins (`@ClusterSingleton({ checkIn })`) reach a real HTTP monitor on a local port from the node that ran each
 * scheduled run: the start, then the success or the failure, paired by the run's id; a monitor that refuses, hangs or
 * is gone never changes what the job does, and is said once per streak. On every backend.
 */
describe.each<TestBackend>(['hazelcast', 'postgres', 'redis'])('check-ins on %s', (backend) => {
  let node: TestNode;
  let CheckedJobs: ReturnType<typeof checkedJobs>;
  beforeAll(async () => {
    await monitor.start();
    CheckedJobs = checkedJobs(`http://127.0.0.1:${monitor.port}/ping/job-uuid`, `http://127.0.0.1:${monitor.port}/own`);
    const mapPrefix = uniquePrefix(`check-ins-${backend}`);
    await declareTestPrefix(backend, mapPrefix);
    node = await startNode({ ...testBackendOptions(backend, mapPrefix), mapPrefix, identity: { acquirer: 'app-1' }, providers: [CheckedJobs, RuntimeHandlers] });
  });
  afterAll(async () => {
    await node?.close();
    await monitor.stop();
    monitor.heard.length = 0;
  });

  it('sends the start, then the success, of a run, with one run id', async () => {
    const before = monitor.heard.length;
    await node.get(CheckedJobs).report();
    const rid = (await eventually('the start check-in', () => monitor.heard.slice(before).find((h) => h.path === '/ping/job-uuid/start')))!.query.get('rid')!;
    expect(rid).toMatch(/^[0-9a-f-]{36}$/);
    await eventually('the success check-in', () => monitor.of(rid).length === 2);
    expect(monitor.of(rid)).toEqual(['/ping/job-uuid/start', '/ping/job-uuid']);
  });

  it('sends the failure of a run that threw, and the caller still gets the error', async () => {
    const before = monitor.heard.length;
    await expect(node.get(CheckedJobs).fail()).rejects.toThrow('the ledger is closed');
    const rid = (await eventually('the start check-in', () => monitor.heard.slice(before).find((h) => h.path === '/ping/job-uuid/start')))!.query.get('rid')!;
    await eventually('the failure check-in', () => monitor.of(rid).length === 2);
    expect(monitor.of(rid)).toEqual(['/ping/job-uuid/start', '/ping/job-uuid/fail']);
  });

  it('fills {run} in URLs of your own', async () => {
    const before = monitor.heard.length;
    await node.get(CheckedJobs).own();
    const heard = await eventually('the success check-in', () => monitor.heard.slice(before).find((h) => h.path.startsWith('/own/done/')));
    expect(heard!.path).toMatch(/^\/own\/done\/[0-9a-f-]{36}$/);
  });

  it('checks in nothing for a run now', async () => {
    const before = monitor.heard.length;
    const result = await node.get(ScheduleService).runNow('CheckedJobs.report', { timeout: '10s', wait: '10s' });
    expect(result.outcome).toBe('completed');
    // A scheduled run after it is heard, and nothing else.
    const scheduledAt = Date.now();
    await node.get(CheckedJobs).report();
    const success = await eventually('the scheduled run\'s check-ins', () => monitor.heard.find((h) => h.at >= scheduledAt && h.path === '/ping/job-uuid'));
    const rids = new Set(monitor.heard.slice(before).map((h) => h.query.get('rid')));
    expect([...rids]).toEqual([success!.query.get('rid')]);
    expect(rids.size).toBe(1);
  });

  it("checks in a runtime schedule's runs the same way (its definition's checkIn), once each", async () => {
    const schedules = node.get(ScheduleService);
    await schedules.upsert({ id: 'checked-rt', cron: '* * * * * *', handler: 'checked-runtime', duration: '3s', checkIn: { start: `http://127.0.0.1:${monitor.port}/rt/start/{run}`, success: `http://127.0.0.1:${monitor.port}/rt/done/{run}` } });
    try {
      const done = await eventually('two runs checked in', () => {
        const heard = monitor.heard.filter((h) => h.path.startsWith('/rt/done/'));
        return heard.length >= 2 ? heard : undefined;
      }, { timeoutMs: 15_000, intervalMs: 100 });
      const ids = done.map((h) => h.path.split('/')[3]);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) expect(monitor.heard.filter((h) => h.path === `/rt/start/${id}`)).toHaveLength(1);
    } finally {
      await schedules.remove('checked-rt');
    }
  });

  it('runs the job unchanged while the monitor refuses or hangs, says so once, and says when it answers again', async () => {
    const jobs = node.get(CheckedJobs);
    const warnings = () => node.logger.entries.filter((e) => e.level === 'warn' && e.message.includes('CheckedJobs.report: a check-in'));
    const calls = jobs.calls;
    monitor.mode = 'refuse';
    await jobs.report();
    await jobs.report();
    await eventually('the refusal to be logged', () => warnings().length >= 1);
    monitor.mode = 'hang';
    const started = Date.now();
    await jobs.report();
    // The run did not wait for the monitor (5 s per check-in).
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(jobs.calls).toBe(calls + 3);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0].message).toContain('(HTTP 500)');
    monitor.mode = 'answer';
    await jobs.report();
    await eventually('the monitor to be heard again', () => node.logger.entries.some((e) => e.message.includes('CheckedJobs.report: check-ins reach 127.0.0.1')));
    expect(warnings()).toHaveLength(1);
  });
});

describe('check-in options', () => {
  const bad = (checkIn: unknown) => () => resolveClusterSingletonOptions({ semaphore: 'bad-check-in', checkIn: checkIn as never });

  it('names the field of what is wrong, when the class is loaded', () => {
    expect(bad({ healthchecks: 'hc-ping.com/uuid' })).toThrow(InvalidInputError);
    expect(bad({ healthchecks: 'hc-ping.com/uuid' })).toThrow(/checkIn\.healthchecks.*http\(s\) URL/);
    expect(bad({ cronitor: 'https://cronitor.link/p/k/m', success: 'https://x.test/' })).toThrow(/checkIn.*exactly one of healthchecks, cronitor or success/);
    expect(bad({ start: 'https://x.test/' })).toThrow(/checkIn.*got none/);
    expect(bad({ healthchecks: 'https://hc-ping.com/uuid', failure: 'https://x.test/' })).toThrow(/checkIn\.failure.*only applies with success/);
    expect(bad({ success: 'ftp://x.test/' })).toThrow(/checkIn\.success/);
    expect(bad({ succes: 'https://x.test/' })).toThrow(/checkIn\.succes.*is not a check-in option/);
    expect(bad({ healthchecks: 'https://hc-ping.com/uuid', timeout: 'soon' })).toThrow(/checkIn\.timeout/);
    expect(bad('https://hc-ping.com/uuid')).toThrow(/checkIn.*must be an object/);
  });

  it('makes each service\'s URLs', () => {
    expect(resolveClusterSingletonOptions({ semaphore: 'ok', checkIn: { healthchecks: 'https://hc-ping.com/uuid/' } }).checkIn).toEqual({
      start: 'https://hc-ping.com/uuid/start?rid={run}', success: 'https://hc-ping.com/uuid?rid={run}', failure: 'https://hc-ping.com/uuid/fail?rid={run}', timeoutMs: 10_000,
    });
    expect(resolveClusterSingletonOptions({ semaphore: 'ok', checkIn: { cronitor: 'https://cronitor.link/p/key/job', timeout: '2s' } }).checkIn).toEqual({
      start: 'https://cronitor.link/p/key/job?state=run&series={run}', success: 'https://cronitor.link/p/key/job?state=complete&series={run}',
      failure: 'https://cronitor.link/p/key/job?state=fail&series={run}', timeoutMs: 2_000,
    });
  });
});
