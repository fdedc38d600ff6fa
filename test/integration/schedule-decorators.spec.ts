import { Injectable, SetMetadata } from '@nestjs/common';
import { Cron, Interval, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { SCHEDULER_TYPE } from '@nestjs/schedule/dist/schedule.constants';
import { ClusterSingleton } from '../../lib';
import { MemoryPermitStore, MemoryStoreBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';

const CUSTOM = 'test:custom';
const runs: Array<{ job: string; node: string }> = [];

@Injectable()
class ScheduledJobs {
  static node = new Map<object, string>();

  @ClusterSingleton('above-interval', '5s')
  @Interval('above-interval', 50)
  @SetMetadata(CUSTOM, 'kept-below')
  aboveInterval() {
    runs.push({ job: 'above-interval', node: ScheduledJobs.node.get(this)! });
  }

  @Interval('below-interval', 50)
  @SetMetadata(CUSTOM, 'kept-above')
  @ClusterSingleton('below-interval', '5s')
  belowInterval() {
    runs.push({ job: 'below-interval', node: ScheduledJobs.node.get(this)! });
  }

  @Cron('* * * * * *', { name: 'every-second' })
  @ClusterSingleton('cron', '5s')
  cron() {
    runs.push({ job: 'cron', node: ScheduledJobs.node.get(this)! });
  }

  @ClusterSingleton('timeout', '5s')
  @Timeout('once', 20)
  once() {
    runs.push({ job: 'timeout', node: ScheduledJobs.node.get(this)! });
  }
}

describe('@ClusterSingleton with @nestjs/schedule decorators', () => {
  const nodes: TestNode[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('keeps the method name and every other decorator\'s metadata, above and below', () => {
    const proto = ScheduledJobs.prototype;
    expect(proto.aboveInterval.name).toBe('aboveInterval');
    expect(proto.belowInterval.name).toBe('belowInterval');
    expect(Reflect.getMetadata(CUSTOM, proto.aboveInterval)).toBe('kept-below');
    expect(Reflect.getMetadata(CUSTOM, proto.belowInterval)).toBe('kept-above');
    for (const method of [proto.aboveInterval, proto.belowInterval, proto.cron, proto.once]) {
      expect(Reflect.getMetadata(SCHEDULER_TYPE, method)).toBeDefined();
    }
  });

  it('runs scheduled @Interval, @Cron and @Timeout jobs on one node of two', async () => {
    const backend = new MemoryStoreBackend();
    for (const acquirer of ['node-a', 'node-b']) {
      const node = await startNode({
        identity: { acquirer },
        store: new MemoryPermitStore(backend),
        providers: [ScheduledJobs],
        schedule: true,
      });
      ScheduledJobs.node.set(node.get(ScheduledJobs), acquirer);
      nodes.push(node);
    }
    const registry = nodes[0].get(SchedulerRegistry);
    expect(registry.getIntervals().sort()).toEqual(['above-interval', 'below-interval']);
    expect([...registry.getCronJobs().keys()]).toEqual(['every-second']);

    await eventually('every job to run', () =>
      ['above-interval', 'below-interval', 'cron', 'timeout'].every((job) => runs.some((r) => r.job === job)),
    { timeoutMs: 5000 });
    await eventually('several interval ticks', () => runs.filter((r) => r.job === 'above-interval').length >= 10);
    for (const job of ['above-interval', 'below-interval', 'cron', 'timeout']) {
      const nodesThatRan = new Set(runs.filter((r) => r.job === job).map((r) => r.node));
      expect([job, nodesThatRan.size]).toEqual([job, 1]);
    }
    expect(runs.filter((r) => r.job === 'timeout')).toHaveLength(1);
  });

  it('rejects bad decorator input when the class is defined, naming the semaphore and field', () => {
    expect(() => ClusterSingleton('billing', 'soon')).toThrow('Semaphore "billing": invalid duration');
    expect(() => ClusterSingleton({ semaphore: 'billing', mode: 'forever' as never })).toThrow('invalid mode');
    expect(() => ClusterSingleton({ semaphore: 'billing', lockAtLeastFor: '1s' })).toThrow('invalid lockAtLeastFor');
    expect(() => ClusterSingleton('')).toThrow('invalid name');
  });
});
