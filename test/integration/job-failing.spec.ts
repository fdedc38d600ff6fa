import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterSingleton, InvalidInputError, ScheduleHandler, ScheduleService, type GatekeeperEvent } from '../../lib';
import { resolveClusterSingletonOptions } from '../../lib/nest/schedules/cluster-singleton.options';
import { judgeJob } from '../../lib/schedules/job-health.rules';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { declareTestPrefix, testBackendOptions, type TestBackend } from '../support/test-backends';
import { uniquePrefix } from '../support/test-cluster';

/** What the test makes the next run do. */
const plan = { fail: true };

/** A runtime schedule's handler that fails while the plan says so. */
@Injectable()
class LedgerHandlers {
  @ScheduleHandler('ledger-close')
  close(): void {
    if (plan.fail) throw new Error('the ledger is locked');
  }
}

@Injectable()
class LedgerJobs {
  /** Release mode: each run is a new grant, on whichever node calls, as ticks on several replicas are. */
  @ClusterSingleton({ semaphore: 'ledger-close', duration: '30s', mode: 'release', health: { failureThreshold: 2, recoveryThreshold: 2 } })
  async close(): Promise<void> {
    if (plan.fail) throw new Error('the ledger is locked');
  }

  /** No `health` option: never judged, as before the option existed. */
  @ClusterSingleton({ semaphore: 'ledger-audit', duration: '30s', mode: 'release' })
  async audit(): Promise<void> {
    this.audits++;
    throw new Error('the audit trail is gone');
  }

  audits = 0;
}

/**
 * A job's failing and recovered are decided once for the cluster: where the run history is merged, by the one node
 * whose write of it turns the job, so two replicas that both ran failing runs raise one alert, not two. Runs on two
 * nodes alternate; the threshold is two in a row each way.
 */
describe.each<TestBackend>(['hazelcast', 'postgres', 'redis'])('a job failing and recovering on %s', (backend) => {
  const nodes: TestNode[] = [];
  const heard: Array<GatekeeperEvent & { name: 'gatekeeper.job.failing' | 'gatekeeper.job.recovered' }> = [];
  beforeAll(async () => {
    const mapPrefix = uniquePrefix(`failing-${backend}`);
    await declareTestPrefix(backend, mapPrefix);
    for (const acquirer of ['app-1', 'app-2']) {
      const node = await startNode({
        ...testBackendOptions(backend, mapPrefix), mapPrefix, identity: { acquirer }, providers: [LedgerJobs, LedgerHandlers], membership: false,
        schedules: { history: { flushInterval: '100ms' } },
      });
      node.gatekeeper.events.subscribe((event) => {
        if (event.name === 'gatekeeper.job.failing' || event.name === 'gatekeeper.job.recovered') heard.push(event);
      });
      nodes.push(node);
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
  });

  /** One run on `node`, then its history written (each node flushes every 100 ms). */
  async function runOn(node: TestNode, fail: boolean): Promise<void> {
    plan.fail = fail;
    await node.get(LedgerJobs).close().catch(() => undefined);
  }

  const history = (node: TestNode) => node.get(ScheduleService).history('LedgerJobs.close');
  /** Three flush intervals: long enough for a write that would say something wrongly to have landed and said it. */
  const settle = () => sleep(300);

  it('one failure is below the threshold; the second, on the other node, is one failing event; then two successes, one recovered', async () => {
    const [a, b] = nodes;
    await runOn(a, true);
    await eventually('the first failure in the history', async () => (await history(a)).counts.failed === 1, { timeoutMs: 10_000 });
    await settle();
    expect(heard).toEqual([]);

    await runOn(b, true);
    await eventually('the failing event', () => heard.length === 1, { timeoutMs: 10_000 });
    await runOn(a, true); // a third failure: still failing, nothing new
    await eventually('the third failure in the history', async () => (await history(b)).counts.failed === 3, { timeoutMs: 10_000 });
    await settle();
    expect(heard).toEqual([expect.objectContaining({ name: 'gatekeeper.job.failing', job: 'LedgerJobs.close', failures: 2, lastError: 'the ledger is locked' })]);
    const failing = heard[0] as { since: number };
    // The history says so to every reader, and the job's health check is down while it is, whatever its last success.
    expect((await history(a)).failingSince).toBe(failing.since);
    expect((await a.get(ScheduleService).describe('LedgerJobs.close')).failingSince).toBe(failing.since);
    const judged = judgeJob(await b.get(ScheduleService).describe('LedgerJobs.close'), 24 * 3_600_000, Date.now());
    expect(judged).toMatchObject({ status: 'down', failingSince: failing.since, message: expect.stringContaining('LedgerJobs.close is failing since') });

    await runOn(b, false);
    await eventually('the first success in the history', async () => (await history(a)).counts.completed === 1, { timeoutMs: 10_000 });
    await settle();
    expect(heard).toHaveLength(1);
    await runOn(a, false);
    await eventually('the recovered event', () => heard.length === 2, { timeoutMs: 10_000 });
    await settle();
    expect(heard).toEqual([
      expect.objectContaining({ name: 'gatekeeper.job.failing' }),
      expect.objectContaining({ name: 'gatekeeper.job.recovered', job: 'LedgerJobs.close', successes: 2, failingSince: failing.since }),
    ]);
    expect((await history(b)).failingSince).toBeUndefined();
    expect(judgeJob(await a.get(ScheduleService).describe('LedgerJobs.close'), 24 * 3_600_000, Date.now()).status).toBe('up');
    // Both nodes heard of each from the one that decided it: said on one node each time, never on both.
    expect(nodes.flatMap((n) => n.logger.entries.filter((e) => e.message.startsWith('LedgerJobs.close is failing'))).length).toBe(1);
  }, 60_000);

  it('a job without the health option is never judged: no event, no failingSince, its health check as before', async () => {
    const [a, b] = nodes;
    const before = heard.length;
    for (const node of [a, b, a]) {
      const jobs = node.get(LedgerJobs);
      const ran = jobs.audits;
      // A tick the other node's permit still covers in this node's view is skipped: tick again until it runs here.
      await eventually('a run of audit on this node', async () => (await jobs.audit().catch(() => undefined), jobs.audits > ran), { timeoutMs: 10_000, intervalMs: 100 });
    }
    await eventually('the three failures in the history', async () => (await a.get(ScheduleService).history('LedgerJobs.audit')).counts.failed === 3, { timeoutMs: 10_000 });
    await settle();
    expect(heard.slice(before)).toEqual([]);
    expect(await b.get(ScheduleService).history('LedgerJobs.audit')).not.toHaveProperty('failingSince');
  }, 60_000);

  it('a runtime schedule takes the same health: failing once at its threshold, from its own runs', async () => {
    const [a, b] = nodes;
    const before = heard.length;
    await a.get(ScheduleService).upsert({ id: 'ledger-nightly', cron: '0 0 2 * * *', handler: 'ledger-close', duration: '30s', health: { failureThreshold: 2 } });
    expect((await b.get(ScheduleService).schedule('ledger-nightly'))?.definition.health).toEqual({ failureThreshold: 2, recoveryThreshold: 1 });
    plan.fail = true;
    await eventually('the schedule armed on the node', async () => (await a.get(ScheduleService).runNow('ledger-nightly', { wait: '10s' })).outcome === 'failed', { timeoutMs: 20_000, intervalMs: 200 });
    await settle();
    expect(heard.slice(before)).toEqual([]);
    expect((await b.get(ScheduleService).runNow('ledger-nightly', { wait: '10s' })).outcome).toBe('failed');
    await eventually('the failing event', () => heard.length === before + 1, { timeoutMs: 10_000 });
    expect(heard.slice(before)).toEqual([expect.objectContaining({ name: 'gatekeeper.job.failing', job: 'ledger-nightly', failures: 2 })]);
  }, 60_000);
});

describe('the health option', () => {
  it('refuses a bad threshold or grace and an unknown key, naming the semaphore and the field', () => {
    const bad = (health: unknown) => () => resolveClusterSingletonOptions({ semaphore: 'ledger', duration: '1m', health: health as never });
    expect(bad({ failureThreshold: 0 })).toThrow(InvalidInputError);
    expect(bad({ failureThreshold: 0 })).toThrow(/"ledger".*health\.failureThreshold.*whole number from 1 to 1000, got 0/);
    expect(bad({ recoveryThreshold: 1.5 })).toThrow(/health\.recoveryThreshold/);
    expect(bad({ grace: 'soon' })).toThrow(/health\.grace/);
    expect(bad({ graceMs: 100 })).toThrow(/health\.graceMs.*is not an option/);
    expect(resolveClusterSingletonOptions({ semaphore: 'ledger', duration: '1m', health: { grace: '2m' } }).health).toEqual({ graceMs: 120_000, failureThreshold: 1, recoveryThreshold: 1 });
  });
});
