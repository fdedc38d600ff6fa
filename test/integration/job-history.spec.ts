import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService, ScheduleService, NotFoundError, type JobHistoryView } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { beforeMapWrites } from '../support/memory-map-hooks';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

/** Jobs the tests call tick by tick (the cron schedules never fire within a test: they name the instants). */
@Injectable()
class HistoryJobs {
  failNext = false;
  /** Runs of `slow` going on now on this node, and the most at once. */
  slowRunning = 0;
  slowMostAtOnce = 0;
  readonly events: string[] = [];
  private readonly waiting = new Set<() => void>();

  /** Lets every `slow` run still going end by itself. */
  finishSlow(): void {
    for (const end of this.waiting) end();
  }

  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('0 0 * * * *', { timeZone: 'Europe/Berlin' })
  @ClusterSingleton('history-report', '5s')
  async report(): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('the report service answered 503');
    }
  }

  @ClusterSingleton({ semaphore: 'history-slow', duration: '5s', overlap: 'replace', replaceWait: '3s' })
  async slow(label: string): Promise<void> {
    const signal = this.gatekeeper.currentLease()!.signal;
    this.slowRunning++;
    this.slowMostAtOnce = Math.max(this.slowMostAtOnce, this.slowRunning);
    this.events.push(`start ${label}`);
    try {
      await new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
        this.waiting.add(resolve);
      });
      this.events.push(`${signal.aborted ? 'aborted' : 'ended'} ${label}`);
      signal.throwIfAborted();
    } finally {
      this.slowRunning--;
    }
  }
}

describe('run history, describe and the overlap policy on a real member', () => {
  let nodes: TestNode[];
  let mapPrefix: string;

  beforeEach(() => {
    nodes = [];
    mapPrefix = uniquePrefix('history');
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  async function node(acquirer: string): Promise<TestNode> {
    const started = await startNode({
      identity: { acquirer, group: 'production' }, mapPrefix, providers: [HistoryJobs], schedule: true,
      schedules: { history: { keep: 5, flushInterval: '200ms' } },
    });
    nodes.push(started);
    return started;
  }

  it('keeps the newest runs of a job in the cluster, with the failure, the instant and the skipped ticks of every node', async () => {
    const a = await node('node-a');
    const b = await node('node-b');
    const tick = () => Promise.all([a, b].map((n) => n.get(HistoryJobs).report().catch(() => undefined)));
    for (let i = 0; i < 4; i++) await tick();
    const holder = [a, b].find((n) => n.gatekeeper.heldPermits().some((p) => p.semaphore === 'history-report'))!;
    holder.get(HistoryJobs).failNext = true;
    for (let i = 0; i < 3; i++) await tick();

    // Read from the node that did not run it: everything it sees came through the cluster.
    const other = holder === a ? b : a;
    let last: unknown;
    const history = await eventually('the history written', async () => {
      const h = await other.get(ScheduleService).history('HistoryJobs.report');
      last = h;
      return h.runs.length === 5 && (h.counts.completed ?? 0) + (h.counts.failed ?? 0) === 7 && h.skipped.NO_PERMIT_AVAILABLE === 7 ? h : undefined;
    }, { timeoutMs: 10_000 }).catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(last)}`); });
    expect(history.counts).toEqual({ completed: 6, failed: 1 });
    expect(history.lastFailure).toMatchObject({ outcome: 'failed', error: 'the report service answered 503', node: holder.gatekeeper.identity.acquirer });
    expect(new Set(history.runs.map((r) => r.node))).toEqual(new Set([holder.gatekeeper.identity.acquirer]));
    // Each run names the scheduled instant of its tick: the top of the hour in Berlin (a whole hour in UTC too).
    for (const run of history.runs) expect(run.instant! % 3_600_000).toBe(0);

    const described = await other.get(ScheduleService).describe('HistoryJobs.report');
    expect(described).toMatchObject({ semaphore: 'history-report', mode: 'hold', paused: false, cron: '0 0 * * * *', timeZone: 'Europe/Berlin' });
    expect(described.holders).toEqual([expect.objectContaining({ node: holder.gatekeeper.identity.acquirer })]);
    expect(described.nextRuns).toHaveLength(10);
    expect(described.nextRuns[1] - described.nextRuns[0]).toBe(3_600_000);
    expect(described.lastRun?.id).toBe(history.runs[0].id);
    await expect(other.get(ScheduleService).describe('HistoryJobs.nope')).rejects.toThrow(NotFoundError);
  });

  it("with overlap: 'replace', fires the running run's signal and starts the next only once it ended", async () => {
    const a = await node('node-a');
    const jobs = a.get(HistoryJobs);
    const first = jobs.slow('first');
    await eventually('the first run to start', () => jobs.events.includes('start first'));
    const second = jobs.slow('second');
    await eventually('the second run to start', () => jobs.events.includes('start second'), { timeoutMs: 5_000 });
    expect(jobs.events.slice(0, 3)).toEqual(['start first', 'aborted first', 'start second']);
    expect(jobs.slowMostAtOnce).toBe(1);
    await first;
    jobs.finishSlow();
    await second;
    const history = await eventually('both runs in the history', async () => {
      const h = await a.get(ScheduleService).history('HistoryJobs.slow');
      return h.runs.length === 2 && h.runs.every((r) => r.outcome !== 'running') ? h : undefined;
    }, { timeoutMs: 10_000 });
    // A replaced run is what overlap: 'replace' is for: `replaced`, not a failure, and no warning of a lost permit.
    expect(history.runs.map((r) => r.outcome)).toEqual(['completed', 'replaced']);
    expect(history.lastFailure).toBeUndefined();
    expect(a.logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
  });
});

/** A job "run now" targets: counts its runs here, with the trigger the history gives them. */
@Injectable()
class ManualJobs {
  readonly runs: Array<{ node: string; token: number | undefined }> = [];

  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('0 0 3 * * *')
  @ClusterSingleton('manual-report', '5s')
  async nightly(): Promise<void> {
    this.runs.push({ node: this.gatekeeper.identity.acquirer, token: this.gatekeeper.currentPermit()?.fencingToken });
  }
}

describe('run now on a real member', () => {
  let nodes: TestNode[];
  let mapPrefix: string;

  beforeEach(() => {
    nodes = [];
    mapPrefix = uniquePrefix('run-now');
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  async function node(acquirer: string, definitions?: Array<{ name: string; duration: string; permits?: number; acquirerPattern?: string }>): Promise<TestNode> {
    const started = await startNode({
      identity: { acquirer, group: 'production' }, mapPrefix, providers: [ManualJobs], schedule: true, definitions,
      schedules: { history: { flushInterval: '200ms' } },
    });
    nodes.push(started);
    return started;
  }
  const allRuns = () => nodes.flatMap((n) => n.get(ManualJobs).runs);

  it('runs the job once in the cluster, on the holder, marked manual in the history', async () => {
    const [a, b, c] = [await node('node-a'), await node('node-b'), await node('node-c')];
    // A tick on every node: one of them takes the permit and keeps it.
    await Promise.all([a, b, c].map((n) => n.get(ManualJobs).nightly()));
    const holder = allRuns()[0].node;
    const asker = [a, b, c].find((n) => n.gatekeeper.identity.acquirer !== holder)!;

    const started = await asker.get(ScheduleService).runNow('ManualJobs.nightly');
    expect(started).toMatchObject({ job: 'ManualJobs.nightly', node: holder, token: allRuns()[0].token });
    await eventually('the manual run', () => allRuns().length === 2);
    expect(allRuns()[1]).toEqual({ node: holder, token: started.token });
    const history = await eventually('the manual run in the history', async () => {
      const h = await asker.get(ScheduleService).history('ManualJobs.nightly');
      return h.runs.some((r) => r.trigger === 'manual' && r.outcome === 'completed') ? h : undefined;
    });
    expect(history.runs[0]).toMatchObject({ trigger: 'manual', request: started.requestId, node: holder, instant: undefined });
    expect(history.runs[1]).toMatchObject({ trigger: 'schedule' });
    // Nothing else ran it: the other nodes heard the request and left it to the holder.
    await sleep(300);
    expect(allRuns()).toHaveLength(2);
  });

  it('with no holder, one admitted node takes the permit and runs it', async () => {
    const definitions = [{ name: 'manual-report', duration: '5s', acquirerPattern: 'node-b' }];
    const a = await node('node-a', definitions);
    await node('node-b', definitions);
    const started = await a.get(ScheduleService).runNow('ManualJobs.nightly');
    expect(started.node).toBe('node-b');
    await eventually('the run', () => allRuns().length === 1);
    expect(allRuns()).toEqual([{ node: 'node-b', token: started.token }]);
  });

  it('refuses a paused job, a job nobody can run, and an unknown one, and runs nothing', async () => {
    const a = await node('node-a', [{ name: 'manual-report', duration: '5s', permits: 0 }]);
    const service = a.get(ScheduleService);
    await expect(service.runNow('ManualJobs.nightly')).rejects.toMatchObject({ reason: 'PAUSED' });
    await expect(service.runNow('ManualJobs.nope')).rejects.toMatchObject({ reason: 'UNKNOWN_JOB' });
    await a.semaphores.updateDefinition('manual-report', { permits: 1, acquirerPattern: 'node-z' });
    await eventually('the edit seen', () => a.semaphores.getDefinition('manual-report')?.acquirerPattern === 'node-z');
    await expect(service.runNow('ManualJobs.nightly')).rejects.toMatchObject({ reason: 'NO_ELIGIBLE_NODE' });
    expect(allRuns()).toEqual([]);
  });
});

/** A job that catches up one missed instant: every second, so instants pass quickly. */
@Injectable()
class CatchUpJobs {
  readonly runs: Array<{ trigger: string; instant?: number }> = [];

  constructor(private readonly schedules: ScheduleService) {}

  @Cron('* * * * * *')
  @ClusterSingleton({ semaphore: 'catch-up', duration: '1s', missedRuns: 'runOnce', catchUpWindow: '10s' })
  async everySecond(): Promise<void> {
    const run = this.schedules.currentRun()!;
    this.runs.push({ trigger: run.trigger, instant: run.instant });
  }
}

/** As {@link CatchUpJobs}, with a permit that outlives a write held up for more than a second. */
@Injectable()
class SlowCatchUpJobs {
  readonly runs: Array<{ trigger: string; instant?: number }> = [];

  constructor(private readonly schedules: ScheduleService) {}

  @Cron('* * * * * *')
  @ClusterSingleton({ semaphore: 'catch-up-slow', duration: '5s', missedRuns: 'runOnce', catchUpWindow: '10s' })
  async everySecond(): Promise<void> {
    const run = this.schedules.currentRun()!;
    this.runs.push({ trigger: run.trigger, instant: run.instant });
  }
}

/** A job new to the `catch-up` semaphore: deployed after {@link CatchUpJobs} left it vacant. */
@Injectable()
class NewcomerJobs {
  readonly runs: Array<{ trigger: string; instant?: number }> = [];

  constructor(private readonly schedules: ScheduleService) {}

  @Cron('* * * * * *')
  @ClusterSingleton({ semaphore: 'catch-up', duration: '1s', missedRuns: 'runOnce', catchUpWindow: '10s' })
  async everySecond(): Promise<void> {
    const run = this.schedules.currentRun()!;
    this.runs.push({ trigger: run.trigger, instant: run.instant });
  }
}

/** No instant is both caught up and judged missed. */
function missedNotCaughtUp(history: JobHistoryView): boolean {
  const caughtUp = history.slots.filter((row) => row.verdict === 'caughtUp').map((row) => row.instant);
  return caughtUp.length === 1 && !caughtUp.some((at) => history.slots.some((row) => row.verdict === 'missed' && row.instant <= at && at <= (row.last ?? row.instant)));
}

describe('missed runs at start-up on a real member', () => {
  it("runs the newest instant missed while nobody was up, once, as soon as a node starts", async () => {
    const mapPrefix = uniquePrefix('catch-up');
    const options = { identity: { acquirer: 'node-a', group: 'production' }, mapPrefix, providers: [CatchUpJobs], schedules: { history: { flushInterval: '200ms' } } };
    const first = await startNode(options);
    await first.get(CatchUpJobs).everySecond();
    expect(first.get(CatchUpJobs).runs).toEqual([{ trigger: 'schedule', instant: expect.any(Number) }]);
    await first.close(); // releases the permit: nobody holds it from here
    const closedAt = Date.now();
    // vacantSince errs late by the skew bound (500 ms by default), so wait three instants past it.
    const skewMs = 500;
    await eventually('three instants to pass', () => Date.now() >= closedAt + skewMs + 3_100, { intervalMs: 100, timeoutMs: 10_000 });
    const startingAt = Date.now();
    const second = await startNode({ ...options, identity: { acquirer: 'node-b', group: 'production' } });
    try {
      const runs = await eventually('the catch-up', () => (second.get(CatchUpJobs).runs.length > 0 ? second.get(CatchUpJobs).runs : undefined), { timeoutMs: 10_000 });
      expect(runs[0]).toEqual({ trigger: 'catchUp', instant: expect.any(Number) });
      // The newest second that passed before the start was decided, after the release.
      expect(runs[0].instant!).toBeGreaterThan(closedAt);
      expect(runs[0].instant!).toBeGreaterThan(startingAt - 1_000);
      // Its ticks after the catch-up are for later instants: none runs the caught-up instant again.
      expect(new Set(runs.map((r) => r.instant)).size).toBe(runs.length);
      // Node-b goes on ticking every second: look for the catch-up among whatever it has written by then.
      const history = await eventually('the history', async () => {
        const h = await second.get(ScheduleService).history('CatchUpJobs.everySecond');
        // The instants nobody ran, judged once they settled (two flushes and two store deadlines after each): all but
        // the one caught up.
        return h.missed.count >= 2 && h.runs.some((r) => r.trigger === 'catchUp') ? h : undefined;
      }, { timeoutMs: 30_000 });
      expect(missedNotCaughtUp(history)).toBe(true);
      expect(history.runs.filter((r) => r.trigger === 'catchUp')).toEqual([expect.objectContaining({ instant: runs[0].instant, outcome: 'completed' })]);
    } finally {
      await second.close();
    }
  });

  it('counts a new job\'s missed instants from its first registration, not from its semaphore\'s vacancy', async () => {
    const mapPrefix = uniquePrefix('newcomer');
    const options = { mapPrefix, schedule: true, schedules: { history: { flushInterval: '200ms' } } };
    const first = await startNode({ ...options, identity: { acquirer: 'node-a', group: 'production' }, providers: [CatchUpJobs] });
    await first.get(CatchUpJobs).everySecond();
    await first.close(); // the semaphore is vacant from here
    const closedAt = Date.now();
    await eventually('three instants to pass', () => Date.now() >= closedAt + 500 + 3_100, { intervalMs: 100, timeoutMs: 10_000 });
    // The next deploy has a new job on the same semaphore (and not the old one): it never existed while it was vacant.
    const second = await startNode({ ...options, identity: { acquirer: 'node-b', group: 'production' }, providers: [NewcomerJobs] });
    try {
      await eventually('two ticks of the newcomer', () => second.get(NewcomerJobs).runs.filter((r) => r.trigger === 'schedule').length >= 2, { timeoutMs: 10_000 });
      expect(second.get(NewcomerJobs).runs.filter((r) => r.trigger === 'catchUp')).toEqual([]);
      const history = await eventually('its history', async () => {
        const h = await second.get(ScheduleService).history('NewcomerJobs.everySecond');
        return h.runs.length >= 2 ? h : undefined;
      }, { timeoutMs: 10_000 });
      expect(history.missed).toEqual({ count: 0 });
    } finally {
      await second.close();
    }
  });

  it("catches up only instants missed before the node started, however long its decision takes: a tick that comes meanwhile runs its own instant, once", async () => {
    // One memory backend for both nodes: permits and history shared (the second node must see the job the first one
    // ran: it is no newcomer). The second node's permit writes take longer than a second while `slow`: instants pass
    // while start-up's catch-up decides.
    const memory = new MemoryBackend();
    const options = { mapPrefix: uniquePrefix('catch-up-slow'), providers: [SlowCatchUpJobs], schedule: true, schedules: { history: { flushInterval: '200ms' } } };
    const first = await startNode({ ...options, identity: { acquirer: 'node-a', group: 'production' }, backend: memory });
    await first.get(SlowCatchUpJobs).everySecond();
    await first.close();
    const closedAt = Date.now();
    await eventually('three instants to pass', () => Date.now() >= closedAt + 500 + 3_100, { intervalMs: 100, timeoutMs: 10_000 });
    const store = { slow: true };
    const slowNode = beforeMapWrites(memory.node(), 'semaphores', () => (store.slow ? sleep(1_300) : undefined));
    const second = await startNode({ ...options, identity: { acquirer: 'node-b', group: 'production' }, backend: slowNode });
    try {
      await eventually('the catch-up', () => second.get(SlowCatchUpJobs).runs.some((r) => r.trigger === 'catchUp'), { timeoutMs: 20_000 });
      // Ticks decided as slowly may each come too late to run on a loaded machine: once the catch-up ran, writes are
      // quick again, and the ticks that follow run their own instants.
      store.slow = false;
      const runs = await eventually('two ticks', () => {
        const all = second.get(SlowCatchUpJobs).runs;
        return all.filter((r) => r.trigger === 'schedule').length >= 2 ? all : undefined;
      }, { timeoutMs: 20_000 });
      const [catchUp] = runs.filter((r) => r.trigger === 'catchUp');
      // Missed before the start (the decision ended more than a second later), never an instant that came meanwhile:
      // those are the timer's, so the catch-up comes before every tick.
      expect(catchUp.instant!).toBeLessThan(Math.min(...runs.filter((r) => r.trigger === 'schedule').map((r) => r.instant!)));
      expect(runs.filter((r) => r.trigger === 'catchUp')).toHaveLength(1);
      // No instant runs twice here: not as the catch-up and again as its tick.
      expect(new Set(runs.map((r) => r.instant)).size).toBe(runs.length);
    } finally {
      store.slow = false;
      await second.close();
    }
  });
});
