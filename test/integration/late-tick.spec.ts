import { SEMAPHORE_MAP } from '../../lib/permits/permit-record.store';
import type { StoreBackend } from '../../lib/store/store-backend';
import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cron, Interval } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService, ScheduleService } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { LATE_DECISION } from '../../lib/schedules/late-tick.rules';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';
import { beforeMapWrites } from '../support/memory-map-hooks';

/** A node of `memory` whose next permit write takes `slowMs` (a slow or stalled store, within the decision's deadline). */
function slowWrites(memory: MemoryBackend): { slowMs: number; readonly backend: StoreBackend } {
  const slow = {
    slowMs: 0,
    backend: beforeMapWrites(memory.node(), SEMAPHORE_MAP, async () => {
      const slowMs = slow.slowMs;
      slow.slowMs = 0;
      if (slowMs > 0) await sleep(slowMs);
    }),
  };
  return slow;
}

const INTERVAL_MS = 400;
/** More than half the interval, well within the decision's deadline (a quarter of the 4 s permit). */
const SLOW_MS = 300;
/** The release-mode job: its interval, and the time it keeps a permit (with the 500 ms skew bound, less than the interval). */
const RELEASE_INTERVAL_MS = 4_000;
const LOCK_AT_LEAST_FOR_MS = 3_000;
/**
 * More than half its interval, within the decision's deadline (a quarter of its 10 s permit); the grant is stamped
 * before the write, so the permit is kept for 0.9 s after the dropped call returns.
 */
const RELEASE_SLOW_MS = 2_100;

/**
 * The jobs are called by the test, as their timers would (no timers are mounted): an `@Interval` tick is for the
 * moment it is called, a `@Cron` tick for the newest instant before it.
 */
@Injectable()
class LateJobs {
  readonly runs: Array<{ job: string; trigger: string; instant?: number; token: number }> = [];

  constructor(private readonly gatekeeper: GatekeeperService, private readonly schedules: ScheduleService) {}

  @Interval('late-hold', INTERVAL_MS)
  @ClusterSingleton({ semaphore: 'late-hold', duration: '4s' })
  async hold(): Promise<void> {
    this.note('hold');
  }

  @Interval('late-release', RELEASE_INTERVAL_MS)
  @ClusterSingleton({ semaphore: 'late-release', duration: '10s', mode: 'release', lockAtLeastFor: LOCK_AT_LEAST_FOR_MS })
  async release(): Promise<void> {
    this.note('release');
  }

  /** Every second, catching up the newest missed instant; a 5 s permit: a decision may take 1.25 s. */
  @Cron('* * * * * *')
  @ClusterSingleton({ semaphore: 'late-catch-up', duration: '5s', missedRuns: 'runOnce', catchUpWindow: '10s' })
  async everySecond(): Promise<void> {
    this.note('everySecond');
  }

  private note(job: string): void {
    const run = this.schedules.currentRun()!;
    this.runs.push({ job, trigger: run.trigger, instant: run.instant, token: this.gatekeeper.currentPermit()!.fencingToken });
  }
}

/** Issue 47: a tick decided more than half a period after its instant is dropped; its permit is handled as usual. */
describe('a tick whose decision lands late', () => {
  const nodes: TestNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
  });

  /** A node with its permits on `permits` (the rest in its own memory). */
  async function node(acquirer: string, permits: StoreBackend, mapPrefix: string): Promise<TestNode> {
    const started = await startNode({
      identity: { acquirer, group: 'production' }, mapPrefix, backend: 'memory', backends: { permits }, providers: [LateJobs],
      schedules: { history: { flushInterval: '200ms' } },
    });
    nodes.push(started);
    return started;
  }
  const skipped = async (n: TestNode, job: string) => (await n.get(ScheduleService).history(job)).skipped;
  const permitsOf = async (n: TestNode, semaphore: string) => (await n.semaphores.permits()).find((s) => s.name === semaphore)?.permits ?? [];

  it('is not run, says so once, counts as skipped, and keeps its permit in hold mode: the next tick runs under it', async () => {
    const store = slowWrites(new MemoryBackend());
    const a = await node('node-a', store.backend, uniquePrefix('late-hold'));
    const jobs = a.get(LateJobs);
    store.slowMs = SLOW_MS;
    await expect(jobs.hold()).resolves.toBeUndefined();
    expect(store.slowMs).toBe(0); // its write was the slow one
    expect(jobs.runs).toEqual([]);
    const lines = a.logger.entries.filter((l) => l.message.includes(`skipped (${LATE_DECISION})`));
    expect(lines).toEqual([{ level: 'log', message: expect.stringMatching(/^LateJobs\.hold skipped \(LATE_DECISION\): its permit decision landed \d+ ms after its instant .*, more than half its period of 400 ms/) }]);
    expect(await skipped(a, 'LateJobs.hold')).toEqual({ [LATE_DECISION]: 1 });
    const [permit] = await permitsOf(a, 'late-hold');
    expect(permit).toMatchObject({ acquirer: 'node-a' });

    await jobs.hold();
    expect(jobs.runs).toEqual([{ job: 'hold', trigger: 'schedule', instant: undefined, token: permit.fencingToken }]);
  });

  it('releases its permit in release mode, not before lockAtLeastFor', async () => {
    const backend = new MemoryBackend();
    const mapPrefix = uniquePrefix('late-release');
    const slow = slowWrites(backend);
    const a = await node('node-a', slow.backend, mapPrefix);
    const b = await node('node-b', backend, mapPrefix);
    slow.slowMs = RELEASE_SLOW_MS;
    await expect(a.get(LateJobs).release()).resolves.toBeUndefined();
    expect(a.get(LateJobs).runs).toEqual([]);
    expect(await skipped(a, 'LateJobs.release')).toEqual({ [LATE_DECISION]: 1 });
    const [permit] = await permitsOf(b, 'late-release');
    expect(permit).toMatchObject({ acquirer: 'node-a' });
    // Kept for lockAtLeastFor after its grant: node-b's ticks meanwhile find it taken; then released, and one runs.
    const ranAt = await eventually('node-b to run it', async () => {
      await b.get(LateJobs).release();
      return b.get(LateJobs).runs.length > 0 && Date.now();
    }, { timeoutMs: 10_000, intervalMs: 100 });
    expect(ranAt - permit.grantedAt).toBeGreaterThanOrEqual(LOCK_AT_LEAST_FOR_MS);
    expect((await skipped(b, 'LateJobs.release')).NO_PERMIT_AVAILABLE).toBeGreaterThanOrEqual(1);
    expect(b.get(LateJobs).runs).toEqual([expect.objectContaining({ job: 'release', trigger: 'schedule' })]);
    expect(b.get(LateJobs).runs[0].token).toBeGreaterThan(permit.fencingToken);
  });

  it('still runs the catch-up a late tick brings (missedRuns: runOnce); only the tick\'s own run is dropped', async () => {
    const backend = new MemoryBackend();
    const mapPrefix = uniquePrefix('late-catch-up');
    const a = await node('node-a', backend, mapPrefix);
    await a.get(LateJobs).everySecond();
    const slow = slowWrites(backend);
    const b = await node('node-b', slow.backend, mapPrefix); // its start-up catch-up finds node-a holding
    await a.close(); // releases the permit: nobody holds it from here
    const closedAt = Date.now();
    // vacantSince errs late by the skew bound (500 ms by default), so wait three instants past it.
    await eventually('three instants to pass', () => Date.now() >= closedAt + 500 + 3_100, { intervalMs: 100, timeoutMs: 10_000 });
    // Called early in a second (a call in its second half is for the coming instant, as a timer a little early is),
    // and decided 700 ms later: more than half a second after the instant.
    await eventually('early in a second', () => Date.now() % 1_000 >= 50 && Date.now() % 1_000 < 250, { intervalMs: 5, timeoutMs: 2_000 });
    slow.slowMs = 700;
    await b.get(LateJobs).everySecond();
    const runs = b.get(LateJobs).runs;
    expect(runs).toEqual([expect.objectContaining({ job: 'everySecond', trigger: 'catchUp' })]);
    expect(runs[0].instant!).toBeGreaterThan(closedAt);
    expect(await skipped(b, 'LateJobs.everySecond')).toMatchObject({ [LATE_DECISION]: 1 });
  });
});
