import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, ScheduleHandler, ScheduleService, type GatekeeperEvent } from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { declareTestPrefix, testBackendOptions, type TestBackend } from '../support/test-backends';
import { uniquePrefix } from '../support/test-cluster';

/** A job whose semaphore admits no node of the test (`acquirerPattern: 'nobody'`). */
@Injectable()
class NobodyJobs {
  @Cron('* * * * * *')
  @ClusterSingleton({ semaphore: 'slot-nobody', duration: '1s', mode: 'release' })
  tick(): void {}
}

@Injectable()
class SlotHandlers {
  runs = 0;

  @ScheduleHandler('slot-tick')
  tick(): void {
    this.runs++;
  }
}

type Heard = GatekeeperEvent & { name: 'gatekeeper.job.missed' | 'gatekeeper.job.unrunnable' };


/**
 * The slot ledger tells a skip on purpose from a miss: a paused schedule's instants are `paused`, with no alert, and a
 * job no live node may run is `noEligibleNode`, said once for the cluster (`gatekeeper.job.unrunnable`), not missed. Two nodes tick every second; the history flushes every 100 ms and the store deadline is 1 s, so an
 * instant settles 2.2 s after it.
 */
describe.each<TestBackend>(['hazelcast', 'postgres', 'redis'])('the slot ledger on %s', (backend) => {
  const nodes: TestNode[] = [];
  const heard: Heard[] = [];
  beforeAll(async () => {
    const mapPrefix = uniquePrefix(`slots-${backend}`);
    await declareTestPrefix(backend, mapPrefix);
    for (const acquirer of ['app-1', 'app-2']) {
      const node = await startNode({
        ...testBackendOptions(backend, mapPrefix), mapPrefix, identity: { acquirer }, providers: [SlotHandlers, NobodyJobs], membership: false, schedule: true,
        storeTimeout: '1s', schedules: { history: { flushInterval: '100ms' } }, definitions: [{ name: 'slot-nobody', duration: '1s', acquirerPattern: 'nobody' }],
      });
      node.gatekeeper.events.subscribe((event) => {
        if (event.name === 'gatekeeper.job.missed' || event.name === 'gatekeeper.job.unrunnable') heard.push(event);
      });
      nodes.push(node);
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
  });

  it('notes a pause as paused, not missed: no alert, and the instants of the pause in the ledger', async () => {
    const schedules = nodes[0].get(ScheduleService);
    await schedules.upsert({ id: 'slot-paused', cron: '* * * * * *', handler: 'slot-tick', duration: '3s' });
    await eventually('two runs', async () => (await schedules.history('slot-paused')).runs.length >= 2, { timeoutMs: 15_000, intervalMs: 100 });
    await schedules.pause('slot-paused');
    const pausedAt = Date.now();
    await eventually('three instants paused', () => Date.now() > pausedAt + 3_200, { timeoutMs: 10_000, intervalMs: 100 });
    await schedules.resume('slot-paused');
    const resumedAt = Date.now();
    const ledger = await eventually('the pause judged', async () => {
      const view = await schedules.history('slot-paused');
      const paused = view.slots.filter((row) => row.verdict === 'paused');
      return paused.reduce((sum, row) => sum + row.count, 0) >= 3 && Date.now() > resumedAt + 3_000 ? view : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    expect(ledger.missed.count).toBe(0);
    expect(heard.filter((e) => e.job === 'slot-paused')).toEqual([]);
  });

  it('says once for the cluster that no live node may run a job, and judges none of its instants missed', async () => {
    const job = 'NobodyJobs.tick';
    const said = await eventually('unrunnable said', () => {
      const found = heard.filter((e) => e.job === job && e.name === 'gatekeeper.job.unrunnable');
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 20_000, intervalMs: 100 });
    const view = await eventually('instants noted noEligibleNode, and settled', async () => {
      const v = await nodes[0].get(ScheduleService).history(job);
      const noted = v.slots.filter((row) => row.verdict === 'noEligibleNode');
      return noted.reduce((sum, row) => sum + row.count, 0) >= 6 ? v : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    // Both nodes noted the instants (each warned of the semaphore on its own); one write said it.
    expect(said).toHaveLength(1);
    expect(view.slots.filter((row) => row.verdict === 'noEligibleNode')).toHaveLength(1);
    expect(view.missed.count).toBe(0);
    expect(heard.filter((e) => e.job === job && e.name === 'gatekeeper.job.missed')).toEqual([]);
    expect(view.runs).toEqual([]);
  });
});
