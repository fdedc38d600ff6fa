import { Injectable, SetMetadata, type Type } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { SCHEDULER_TYPE } from '@nestjs/schedule/dist/schedule.constants';
import { ClusterSingleton, GatekeeperModule, SemaphoreAdminService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { MemoryBackend } from '../../lib/testing';
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
    const backend = new MemoryBackend();
    for (const acquirer of ['node-a', 'node-b']) {
      const node = await startNode({
        identity: { acquirer },
        backend: 'memory', backends: { permits: backend },
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

describe('@Cron settings the cron package refuses, on a @ClusterSingleton job', () => {
  @Injectable()
  class BadMinute {
    @Cron('0 61 * * * *')
    @ClusterSingleton('bad-minute', '5s')
    tick(): void {}
  }

  @Injectable()
  class BadZone {
    @Cron('0 0 * * * *', { timeZone: 'Mars/Olympus' })
    @ClusterSingleton('bad-zone', '5s')
    tick(): void {}
  }

  it.each([
    { job: 'BadMinute.tick', provider: BadMinute, said: /@Cron on BadMinute\.tick: invalid cronTime: the cron package cannot read "0 61 \* \* \* \*": Field value \(61\) is out of range/ },
    { job: 'BadZone.tick', provider: BadZone, said: /@Cron on BadZone\.tick: invalid timeZone: the cron package does not know the time zone "Mars\/Olympus"/ },
  ])('fails the start naming $job and what is wrong, not with the cron package\'s bare message', async ({ provider, said }) => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), GatekeeperModule.forRoot({ backend: 'memory', membership: false })],
      providers: [provider],
    }).setLogger(new CapturingLogger()).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await expect(app.init()).rejects.toThrow(said);
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

describe('a decorator\'s duration against the definition in the cluster', () => {
  @Injectable()
  class Reports {
    @ClusterSingleton('report', '5s')
    run(): void {}
  }

  /** Two methods on one semaphore, with different durations. */
  @Injectable()
  class Exports {
    @ClusterSingleton('export', '30s')
    daily(): void {}

    @ClusterSingleton('export', '10m')
    weekly(): void {}
  }

  async function start(backend: MemoryBackend, extra: { definitions?: Array<{ name: string; duration: string }>; definitionsPolicy?: 'keep' | 'overwrite' } = {}, providers: Type[] = [Reports]) {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', backends: { permits: backend }, membership: false, ...extra })],
      providers,
    }).setLogger(logger).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    // At warn: the job's lease is not the one its decorator asks for.
    return { app, logger, said: () => logger.entries.filter((e) => e.level === 'warn' && /runs with the duration semaphore/.test(e.message)).map((e) => e.message) };
  }

  it('warns when two methods on one semaphore ask for different durations, naming the one in force and its method', async () => {
    const node = await start(new MemoryBackend(), {}, [Exports]);
    try {
      expect(node.said()).toEqual([
        'Exports.weekly runs with the duration semaphore "export" was defined with by Exports.daily, 30s, not its own @ClusterSingleton\'s 10m: '
        + 'methods that share a semaphore share its duration. Give them the same duration, a semaphore each, or "export" a definition in the module\'s definitions',
      ]);
    } finally {
      await node.app.close();
    }
  });

  const warnedBy = (logger: CapturingLogger) => logger.entries.filter((e) => e.level === 'warn' && /module's definitions differs/.test(e.message));

  it('says once at start-up when a module definition differs from the stored one it keeps, with both values, the policy and the command', async () => {
    const backend = new MemoryBackend();
    const first = await start(backend, { definitions: [{ name: 'billing', duration: '1m' }] }, []);
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', backends: { permits: backend }, membership: false, definitions: [{ name: 'billing', duration: '5m', permits: 2, groupPattern: 'eu-.*' }] })],
    }).setLogger(logger).compile();
    const changed = moduleRef.createNestApplication({ logger });
    await changed.init();
    // The warning changes nothing: the stored definition stays in force.
    const kept = await changed.get(SemaphoreAdminService).readDefinition('billing');
    const agreeing = await start(backend, { definitions: [{ name: 'billing', duration: '1m' }] }, []);
    const overwriting = await start(backend, { definitions: [{ name: 'billing', duration: '2m' }], definitionsPolicy: 'overwrite' }, []);
    try {
      const warned = logger.entries.filter((e) => e.level === 'warn' && /module's definitions differs/.test(e.message)).map((e) => e.message);
      expect(warned).toEqual([
        'Semaphore "billing" in the module\'s definitions differs from the one the cluster keeps, which stays in force (definitionsPolicy: \'keep\'): '
        + 'permits 2 in the module, 1 in the cluster; duration 5m in the module, 1m in the cluster; groupPattern "eu-.*" in the module, ".*" in the cluster. '
        + 'Apply the module\'s with the console, the admin API or `npx nestjs-gatekeeper set billing --permits 2 --duration 5m --group-pattern \'eu-.*\'`, '
        + 'or set definitionsPolicy: \'overwrite\' (the module\'s definitions then replace the stored ones at every start, live edits included); '
        + 'if the cluster\'s is the one meant (a live edit), give the module the same values',
      ]);
      expect(kept).toMatchObject({ permits: 1, durationMs: 60_000, groupPattern: '.*' });
      // The node that agrees says nothing; 'overwrite' applies its own and says nothing.
      expect(warnedBy(agreeing.logger)).toEqual([]);
      expect(warnedBy(overwriting.logger)).toEqual([]);
      expect(await overwriting.app.get(SemaphoreAdminService).readDefinition('billing')).toMatchObject({ durationMs: 120_000 });
    } finally {
      await overwriting.app.close();
      await agreeing.app.close();
      await changed.close();
      await first.app.close();
    }
  });

  it('says once at start-up which value is in force when they differ, and nothing when they agree', async () => {
    const backend = new MemoryBackend();
    const editor = await start(backend, { definitions: [{ name: 'report', duration: '10m' }] });
    const node = await start(backend);
    try {
      expect(node.said()).toEqual([
        expect.stringMatching(/^Reports\.run runs with the duration semaphore "report" has in the cluster, 10m, not @ClusterSingleton's 5s: .*nestjs-gatekeeper set report --duration/),
      ]);
    } finally {
      await node.app.close();
      await editor.app.close();
    }
    const agreeing = await start(new MemoryBackend());
    try {
      expect(agreeing.said()).toEqual([]);
    } finally {
      await agreeing.app.close();
    }
  });
});
