import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterSingleton, DenyReason, GatekeeperService, type GatekeeperEvent, type PermitLease } from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { recordNewClients } from '../support/client-spy';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

/** What the jobs below did: who ran, with which token, and what their lease said. */
const runs: Array<{ job: string; node: string; token: number; at: number; signal?: string }> = [];

@Injectable()
class HungJob {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  /** Never returns by itself: only its lease's signal ends it. */
  @ClusterSingleton({ semaphore: 'hung', duration: '1s', maxRunTime: '1500ms' })
  async run(): Promise<void> {
    const lease = this.gatekeeper.currentLease()!;
    runs.push({ job: 'hung', node: this.gatekeeper.identity.acquirer, token: lease.permit.fencingToken, at: Date.now() });
    await new Promise((resolve) => lease.signal.addEventListener('abort', resolve));
    runs.push({ job: 'hung', node: this.gatekeeper.identity.acquirer, token: lease.permit.fencingToken, at: Date.now(), signal: String((lease.signal.reason as Error).message) });
  }
}

@Injectable()
class ReleaseJob {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  /** The guide's advice (docs/cron-singletons.md) taken too far: lockAtLeastFor close to the interval. */
  @Interval(60_000)
  @ClusterSingleton({ semaphore: 'exported', duration: '5s', mode: 'release', lockAtLeastFor: '300ms' })
  run(): void {
    runs.push({ job: 'exported', node: this.gatekeeper.identity.acquirer, token: this.gatekeeper.currentPermit()!.fencingToken, at: Date.now() });
  }
}

/** A permit has one user at a time, in a process as across the cluster; hung and release-mode jobs let go. */
describe('runs under a permit', () => {
  const nodes: TestNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    runs.length = 0;
  });
  const start = async (acquirer: string, mapPrefix: string, extra: Parameters<typeof startNode>[0] = {}) => {
    const node = await startNode({ identity: { acquirer }, mapPrefix, providers: [HungJob, ReleaseJob], ...extra });
    nodes.push(node);
    return node;
  };

  it('runs concurrent withPermit calls in one process one at a time (IN_USE for the others)', async () => {
    const a = await start('node-a', uniquePrefix('exclusive'), { definitions: [{ name: 'manual', duration: '5s', permits: 2 }] });
    let inside = 0;
    let most = 0;
    const work = async (lease: PermitLease) => {
      most = Math.max(most, ++inside);
      await sleep(50);
      inside--;
      return lease.permit.fencingToken;
    };
    const results = await Promise.all(Array.from({ length: 5 }, () => a.gatekeeper.withPermit('manual', work)));
    expect(most).toBe(1);
    expect(results.filter((r) => r.ran)).toHaveLength(1);
    expect(results.filter((r) => !r.ran).map((r) => !r.ran && r.denied.reason)).toEqual(Array(4).fill(DenyReason.IN_USE));
    // acquire() holds the permit for its caller until release(): withPermit meanwhile is IN_USE.
    const permit = await a.gatekeeper.acquire('manual');
    expect(await a.gatekeeper.withPermit('manual', work)).toMatchObject({ ran: false, denied: { reason: DenyReason.IN_USE } });
    await a.gatekeeper.release(permit);
    expect(await a.gatekeeper.withPermit('manual', work)).toMatchObject({ ran: true });
  });

  it('stops keeping a hung job\'s permit at maxRunTime, fires its signal, and lets another node take over', async () => {
    const mapPrefix = uniquePrefix('hung');
    const a = await start('node-a', mapPrefix, { maxClockSkew: '100ms' });
    const b = await start('node-b', mapPrefix, { maxClockSkew: '100ms' });
    const overran: GatekeeperEvent[] = [];
    const heard = a.gatekeeper.events.subscribe((event) => event.name === 'gatekeeper.job.overran' && overran.push(event));
    const startedAt = Date.now();
    const running = a.get(HungJob).run();
    await eventually('node-a to run', () => runs.length === 1);
    // node-b ticks meanwhile, as its schedule would (its own run, once granted, hangs too: not awaited).
    const bRuns: Array<Promise<void>> = [];
    const taken = await eventually('node-b to take over', () => {
      bRuns.push(b.get(HungJob).run());
      return runs.find((r) => r.node === 'node-b')?.at;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    const signal = runs.find((r) => r.node === 'node-a' && r.signal);
    expect(signal?.signal).toContain('maxRunTime');
    // Keep-alive stops at 1.5 s; the permit (1 s) lapses by 2.5 s, plus the skew bound and a tick.
    expect(taken - startedAt).toBeGreaterThanOrEqual(1_500);
    expect(taken - startedAt).toBeLessThan(4_000);
    await running;
    heard.unsubscribe();
    // The run went past its maxRunTime: said once, by the node that ran it, with how long it ran in all.
    expect(overran).toEqual([expect.objectContaining({ name: 'gatekeeper.job.overran', node: 'node-a', job: 'HungJob.run', semaphore: 'hung', maxRunTimeMs: 1_500, durationMs: expect.any(Number) })]);
    expect((overran[0] as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(1_500);
    await Promise.all(bRuns);
    process.stdout.write(`maxRunTime 1.5 s, permit 1 s: another node took over ${taken - startedAt} ms after the hung run began\n`);
  });

  it('release mode releases: every run is a new grant with a larger token', async () => {
    const mapPrefix = uniquePrefix('release');
    const a = await start('node-a', mapPrefix, { maxClockSkew: '100ms' });
    const b = await start('node-b', mapPrefix, { maxClockSkew: '100ms' });
    for (let tick = 0; tick < 4; tick++) {
      await Promise.all([a, b].map((n) => n.get(ReleaseJob).run()));
      await sleep(500); // the schedule's interval: lockAtLeastFor (300 ms) plus the skew bound (100 ms) pass
    }
    const tokens = runs.filter((r) => r.job === 'exported').map((r) => r.token);
    expect(tokens).toHaveLength(4);
    expect(tokens.every((t, i) => i === 0 || t > tokens[i - 1])).toBe(true);
    // @Interval(60000) leaves room: no start-up warning for it.
    expect([a, b].flatMap((n) => n.logger.find('warn', 'lockAtLeastFor'))).toEqual([]);
  });

  it('shuts down a client it created when startup fails after connecting', async () => {
    const { created, restore } = recordNewClients();
    try {
      const failing = startNode({ mapPrefix: uniquePrefix('boot'), autoDefine: false, providers: [HungJob] });
      await expect(failing).rejects.toThrow(/"hung"/);
      // The one client the process's stores share (no probe client bounds the first connection): not left running.
      expect(created).toHaveLength(1);
      expect(created.map((c) => c.getLifecycleService().isRunning())).toEqual([false]);
    } finally {
      restore();
    }
  });
});

@Injectable()
class TightReleaseJob {
  @Interval(1000)
  @ClusterSingleton({ semaphore: 'tight', duration: '5s', mode: 'release', lockAtLeastFor: '900ms' })
  run(): void {
    // nothing: only the start-up check matters here
  }
}

describe('release-mode start-up check', () => {
  it('warns when lockAtLeastFor plus maxClockSkew reaches the interval between ticks', async () => {
    const node = await startNode({ mapPrefix: uniquePrefix('tight'), providers: [TightReleaseJob], maxClockSkew: '500ms' });
    try {
      expect(node.logger.find('warn', /TightReleaseJob\.run: lockAtLeastFor \(900 ms\) plus maxClockSkew \(500 ms\) reaches the interval between ticks \(1000 ms\)/)).toHaveLength(1);
    } finally {
      await node.close();
    }
  });
});
