import { Injectable } from '@nestjs/common';
import { ClusterSingleton, ScheduleService, SemaphoreAdminService } from '../../lib';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { StoreBackend } from '../../lib/store/store-backend';
import { ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';
import { readableHistory } from '../../lib/schedules/job-history.rules';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { Operator } from '../harness/operator';
import { checkHistory, checkMissed, newHistoryFile, readHistory, type NodeProcess, type StartEvent, type StoreTarget } from '../harness';
import { SCHEDULE_JOB, startScheduleNode, type ScheduleNodeSettings } from '../harness/schedule-node';
import { CheckInMonitor } from '../support/check-in-monitor';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';

type Start = StartEvent & { trigger: string; instant?: number };
const starts = (file: string) => readHistory(file).filter((e): e is Start => e.type === 'start');

/** The same job as the processes', on an in-process node the definition does not admit: it only asks. */
@Injectable()
class ScheduleJobs {
  @ClusterSingleton('sched-now', '3s')
  async tick(): Promise<void> {
    throw new Error('the asking node must never run the job');
  }
}

/** Where the scenes run: the shared member, and the test run's PostgreSQL server. */
const STORES = [
  {
    on: 'Hazelcast',
    target: (): StoreTarget => testCluster(),
    backend: (mapPrefix: string): StoreBackend => new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
    module: (mapPrefix: string) => ({ hazelcast: { clientConfig: testClientConfig(), mapPrefix } }),
    fresh: async (_mapPrefix: string) => undefined, // the test setup declared the shared member's cluster new
  },
  {
    on: 'Redis',
    target: (): StoreTarget => ({ redisUrl: testRedisUrl() }),
    backend: (mapPrefix: string): StoreBackend => new RedisBackend({ url: testRedisUrl(), mapPrefix }),
    module: (mapPrefix: string) => ({ backend: 'redis' as const, redis: { url: testRedisUrl(), mapPrefix } }),
    fresh: async (mapPrefix: string) => {
      await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh();
    },
  },
  {
    on: 'PostgreSQL',
    target: (): StoreTarget => ({ postgresUrl: testPostgresUrl() }),
    backend: (mapPrefix: string): StoreBackend => new PostgresBackend({ connectionString: testPostgresUrl(), mapPrefix }),
    module: (mapPrefix: string) => ({ backend: 'postgres' as const, postgres: { connectionString: testPostgresUrl(), mapPrefix } }),
    fresh: async (_mapPrefix: string) => undefined, // a schema's first migration makes it new
  },
];

/**
 * Schedules with real processes on each store: each node is schedule-app.ts, its job a real @Cron under
 * @ClusterSingleton; the checker reads the history the processes wrote.
 */
describe.each(STORES)('schedules with real processes on $on', ({ on, target, backend, module, fresh }) => {
  const nodes: NodeProcess[] = [];
  let asker: TestNode | undefined;
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
    await asker?.close();
    asker = undefined;
  });

  function settings(name: string, historyFile: string, mapPrefix: string, job: Partial<ScheduleNodeSettings['job']> = {}): ScheduleNodeSettings {
    return {
      name, historyFile, mapPrefix, cluster: target(),
      job: { semaphore: 'sched-now', cron: '*/2 * * * * *', duration: '3s', runMs: 300, definitions: [{ name: 'sched-now', duration: '3s', acquirerPattern: 'app-.*' }], ...job },
    };
  }

  it('runs a job once, marked manual, on the holder, when one node asks while three run it', async () => {
    const historyFile = newHistoryFile('run-now');
    const mapPrefix = uniquePrefix('run-now');
    await fresh(mapPrefix);
    nodes.push(...(await Promise.all(['app-1', 'app-2', 'app-3'].map((name) => startScheduleNode(settings(name, historyFile, mapPrefix))))));
    await eventually('ticks running', () => starts(historyFile).length >= 2, { timeoutMs: 20_000, intervalMs: 200 });
    asker = await startNode({
      ...module(mapPrefix),
      identity: { acquirer: 'asker', group: 'default' }, mapPrefix, providers: [ScheduleJobs],
      definitions: [{ name: 'sched-now', duration: '3s', acquirerPattern: 'app-.*' }],
    });
    const asked = performance.now();
    const started = await asker.get(ScheduleService).runNow(SCHEDULE_JOB, { timeout: '20s' });
    const latencyMs = Math.round(performance.now() - asked);
    await eventually('more ticks after it', () => starts(historyFile).filter((e) => e.at > started.startedAt).length >= 3, { timeoutMs: 20_000, intervalMs: 200 });

    const manual = starts(historyFile).filter((e) => e.trigger === 'manual');
    expect(manual).toHaveLength(1);
    expect(manual[0]).toMatchObject({ node: started.node, token: started.token, tick: -1 });
    // The holder ran it: the ticks before and after it are under the same token.
    const ticks = starts(historyFile).filter((e) => e.trigger === 'schedule');
    expect(ticks.filter((e) => e.token === started.token).length).toBeGreaterThan(0);
    const check = checkHistory(readHistory(historyFile), { permits: 1 });
    expect(check.violations).toEqual([]);
    process.stdout.write(`run now on ${on} from a node that may not run it: started on the holder ${started.node} ${latencyMs} ms after the call; ${ticks.length} ticks, 1 manual run, 0 violations\n`);
  });

  it('shows the run a SIGKILLed holder left as unknown, and the takeover, in the history', async () => {
    const historyFile = newHistoryFile('killed-run');
    const mapPrefix = uniquePrefix('killed-run');
    await fresh(mapPrefix);
    const job = { semaphore: 'sched-kill', cron: '*/2 * * * * *', duration: '2s', runMs: 5_000, definitions: [{ name: 'sched-kill', duration: '2s' }], flushInterval: '300ms' };
    nodes.push(...(await Promise.all(['app-1', 'app-2', 'app-3'].map((name) => startScheduleNode(settings(name, historyFile, mapPrefix, job))))));
    const first = await eventually('a run to start', () => starts(historyFile)[0], { timeoutMs: 20_000, intervalMs: 100 });
    // Mid-run, after at least one history write (every 300 ms) carried it as running.
    await eventually('the run under way', () => readHistory(historyFile).filter((e) => e.type === 'effect' && e.node === first.node).length >= 8, { timeoutMs: 10_000, intervalMs: 100 });
    await nodes.find((n) => n.name === first.node)!.kill();
    const takeover = await eventually('another node to take over', () => starts(historyFile).find((e) => e.node !== first.node), { timeoutMs: 20_000, intervalMs: 100 });
    expect(takeover.token).toBeGreaterThan(first.token);

    const store = new HistoryRecordStore(backend(mapPrefix));
    await store.connect();
    try {
      const runs = await eventually('the takeover in the cluster history', async () => {
        const stored = await store.read(SCHEDULE_JOB);
        const shown = stored && readableHistory(stored.history).runs;
        return shown?.some((r) => r.token === takeover.token) ? shown : undefined;
      }, { timeoutMs: 10_000, intervalMs: 200 });
      expect(runs.find((r) => r.token === first.token)).toMatchObject({ node: first.node, outcome: 'unknown', instant: first.tick * 1000 });
      expect(runs.find((r) => r.token === takeover.token)).toMatchObject({ node: takeover.node, trigger: 'schedule' });
    } finally {
      await store.close();
    }
    expect(checkHistory(readHistory(historyFile), { permits: 1 }).violations).toEqual([]);
  });
});

/** The catch-up window of the `runOnce` job, in s. */
const CATCH_UP_WINDOW_S = 8;

describe.each(STORES)('missed runs across a full outage, with real processes on $on', ({ on, target, backend, fresh }) => {
  const nodes: NodeProcess[] = [];
  /** Where every node's runs check in (`checkIn`), the two outages under paths of their own. */
  const monitor = new CheckInMonitor();
  beforeAll(() => monitor.start());
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
  });
  afterAll(() => monitor.stop());

  /** Three nodes run a job every 2 s; all are SIGKILLed; three fire instants pass after the permit lapsed; `restart` start again. */
  async function outage(missedRuns: 'skip' | 'runOnce', restart: number) {
    const historyFile = newHistoryFile(`missed-${missedRuns}`);
    const mapPrefix = uniquePrefix(`missed-${missedRuns}`);
    await fresh(mapPrefix);
    const settings = (name: string): ScheduleNodeSettings => ({
      name, historyFile, mapPrefix, cluster: target(),
      // A catch-up window of a few gaps: a start-up slowed by a loaded machine past the next instant still catches up
      // (the default window, one gap, rightly lets a tick a gap later run instead).
      job: {
        semaphore: 'sched-missed', cron: '*/2 * * * * *', duration: '2s', runMs: 100,
        options: {
          ...(missedRuns === 'runOnce' ? { missedRuns, catchUpWindow: `${CATCH_UP_WINDOW_S}s` } : { missedRuns }),
          checkIn: Object.fromEntries(['start', 'success', 'failure'].map((kind) => [kind, `http://127.0.0.1:${monitor.port}/${missedRuns}/${kind}/{run}`])) as { success: string },
        },
        definitions: [{ name: 'sched-missed', duration: '2s' }], flushInterval: '300ms', alerts: 'library',
      },
    });
    const names = ['app-1', 'app-2', 'app-3'];
    const first = await Promise.all(names.map((name) => startScheduleNode(settings(name))));
    nodes.push(...first);
    await eventually('a few ticks', () => starts(historyFile).filter((e) => e.trigger === 'schedule').length >= 2, { timeoutMs: 20_000, intervalMs: 100 });
    await Promise.all(first.map((n) => n.kill()));
    const killedAt = new Map(first.map((n) => [n.pid, Date.now()]));
    for (const killed of first) nodes.splice(nodes.indexOf(killed), 1);
    const lastBefore = Math.max(...starts(historyFile).map((e) => e.tick));
    // The permit (2 s) lapses, then three more fire instants pass with nobody up.
    const restartAfter = (lastBefore + 2 + 3 * 2) * 1000;
    await eventually('three fire instants to pass', () => Date.now() > restartAfter, { timeoutMs: 15_000, intervalMs: 100 });
    const restartedAt = Date.now();
    nodes.push(...(await Promise.all(names.slice(0, restart).map((name) => startScheduleNode(settings(name))))));
    await eventually('ticks after the restart', () => starts(historyFile).filter((e) => e.at > restartedAt && e.trigger === 'schedule').length >= 2, { timeoutMs: 30_000, intervalMs: 100 });
    const after = starts(historyFile).filter((e) => e.at > restartedAt);
    expect(checkHistory(readHistory(historyFile), { permits: 1 }).violations).toEqual([]);
    // Check-ins, from the history and what the monitor heard: each run's start and end once, by its run id; and one
    // failure for the instants nobody ran, from the node that took the permit after the outage, with no start.
    const pings = (kind: string) => monitor.heard.filter((h) => h.path.startsWith(`/${missedRuns}/${kind}/`)).map((h) => ({ rid: h.path.split('/')[3], at: h.at }));
    await eventually('the runs after the restart checked in', () => pings('success').filter((p) => p.at > restartedAt).length >= after.length, { timeoutMs: 10_000, intervalMs: 100 });
    const [started, succeeded, failed] = [pings('start'), pings('success'), pings('failure')];
    for (const list of [started, [...succeeded, ...failed]]) expect(new Set(list.map((p) => p.rid)).size).toBe(list.length);
    const startedIds = new Set(started.map((p) => p.rid));
    expect(succeeded.filter((p) => !startedIds.has(p.rid))).toEqual([]);
    // As many starts as runs: none lost (at least the runs counted before), none doubled (each one a run in the history,
    // which the nodes, ticking on, record within moments of the check-in).
    const startedAfter = started.filter((p) => p.at > restartedAt).length;
    expect(startedAfter).toBeGreaterThanOrEqual(after.length);
    await eventually('a run in the history for every start check-in', () => starts(historyFile).filter((e) => e.at > restartedAt).length >= startedAfter, { timeoutMs: 5_000, intervalMs: 50 });
    // The slot ledger: every instant of the outage that nothing ran is said missed once for the cluster (an event
    // and a failure check-in each), after the restart, by whichever node's write judged it; none that ran is.
    const outageFirst = lastBefore + 2; // the next instant after the last run
    const outageLast = Math.min(...after.map((e) => e.tick)) - 2; // the instant before the first run after the restart
    const expected = Array.from({ length: Math.max(0, (outageLast - outageFirst) / 2 + 1) }, (_, i) => (outageFirst + 2 * i) * 1000)
      .filter((at) => !after.some((e) => e.tick * 1000 === at));
    expect(expected.length).toBeGreaterThanOrEqual(missedRuns === 'skip' ? 3 : 2);
    // A run whose node was SIGKILLed before it wrote its record (a flush, 300 ms) left none: it may be said missed.
    const killed = { at: killedAt, recordMs: 600 };
    const missed = await eventually('every missed instant said', () => {
      const check = checkMissed(readHistory(historyFile), SCHEDULE_JOB, killed);
      return expected.every((at) => check.instants.includes(at)) ? check : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    expect(missed.violations).toEqual([]);
    // Nothing else said missed: the instants after the restart ran (the last one before the kill may have lost its record).
    expect(missed.instants.filter((at) => !expected.includes(at) && at !== lastBefore * 1000)).toEqual([]);
    const alerts = readHistory(historyFile).filter((e) => e.type === 'alert' && e.kind === 'missed');
    for (const alert of alerts) expect(alert.at).toBeGreaterThan(restartedAt);
    const missedPings = await eventually('a failure check-in per missed instant', () => {
      const heard = pings('failure').filter((p) => !startedIds.has(p.rid));
      return heard.length >= missed.instants.length ? heard : undefined;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    expect(missedPings).toHaveLength(missed.instants.length);
    process.stdout.write(`missed slots on ${on} (${missedRuns}): ${expected.length} instant(s) said missed once each, by ${[...new Set(alerts.map((a) => a.node))].join(', ')}\n`);
    return { historyFile, mapPrefix, lastBefore, after };
  }

  it("runs exactly one catch-up for the newest missed instant with 'runOnce', and none with 'skip' (both outages at once)", async () => {
    const [once, skip] = await Promise.all([outage('runOnce', 2), outage('skip', 1)]);

    const catchUps = once.after.filter((e) => e.trigger === 'catchUp');
    expect(catchUps).toHaveLength(1);
    const [catchUp] = catchUps;
    const firstTick = Math.min(...once.after.filter((e) => e.trigger === 'schedule').map((e) => e.tick));
    // Missed (after the lapse of the last permit), and the newest: the fire instant right before the node could run.
    expect(catchUp.tick).toBeGreaterThanOrEqual(once.lastBefore + 2 + 3 * 2);
    expect(catchUp.tick).toBeLessThan(firstTick);
    expect(catchUp.at / 1000 - catchUp.tick).toBeLessThanOrEqual(CATCH_UP_WINDOW_S);
    // Never the same instant twice.
    expect(once.after.filter((e) => e.tick === catchUp.tick)).toHaveLength(1);

    expect(skip.after.filter((e) => e.trigger === 'catchUp')).toEqual([]);
    const store = new HistoryRecordStore(backend(skip.mapPrefix));
    await store.connect();
    try {
      const history = await eventually('the missed instants in the history', async () => {
        const stored = await store.read(SCHEDULE_JOB);
        return stored && stored.history.missed.count >= 3 ? stored.history : undefined;
      }, { timeoutMs: 10_000, intervalMs: 200 });
      expect(history.missed.last).toBeDefined();
      expect(history.slots?.filter((range) => range.verdict === 'missed').reduce((sum, range) => sum + range.count, 0)).toBe(history.missed.count);
    } finally {
      await store.close();
    }
    process.stdout.write(`missed runs on ${on}: runOnce ran 1 catch-up for ${new Date(catchUp.tick * 1000).toISOString()}, ${Math.round(catchUp.at - catchUp.tick * 1000)} ms after that instant; skip ran 0 and counted the missed instants\n`);
  });
});

/**
 * The slot ledger when the node that found an outage dies before it says so: every node SIGKILLed across three
 * instants; one restarts, takes the permit (it knows the vacancy), runs one tick and is SIGKILLed before its history
 * is ever written (its flush interval is an hour); another starts. Each instant nobody ran is said missed once, by
 * the node left, none by the one killed.
 */
describe.each(STORES)('missed slots judged once when the deciding node dies, with real processes on $on', ({ on, target, backend, fresh }) => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
  });

  it('says each instant nobody ran once, from the node left, after the node that found the vacancy was SIGKILLed', async () => {
    const historyFile = newHistoryFile('ledger-kill');
    const mapPrefix = uniquePrefix('ledger-kill');
    await fresh(mapPrefix);
    const settings = (name: string, flushInterval: string): ScheduleNodeSettings => ({
      name, historyFile, mapPrefix, cluster: target(),
      job: {
        semaphore: 'sched-ledger', cron: '*/2 * * * * *', duration: '2s', runMs: 100, options: { mode: 'release' },
        definitions: [{ name: 'sched-ledger', duration: '2s' }], flushInterval, alerts: 'library',
      },
    });
    const store = new HistoryRecordStore(backend(mapPrefix));
    await store.connect();
    try {
      // The ledger begins: a node runs a few ticks and writes them.
      const first = await startScheduleNode(settings('app-0', '300ms'));
      nodes.push(first);
      await eventually('the ledger begun', async () => (await store.read(SCHEDULE_JOB))?.history.judgedThrough !== undefined, { timeoutMs: 30_000, intervalMs: 200 });
      await first.kill();
      const killedAt = new Map([[first.pid, Date.now()]]);
      nodes.splice(nodes.indexOf(first), 1);
      const lastBefore = Math.max(...starts(historyFile).map((e) => e.tick));
      await eventually('three fire instants to pass', () => Date.now() > (lastBefore + 2 + 3 * 2) * 1000, { timeoutMs: 15_000, intervalMs: 100 });
      // The deciding node: it takes the permit after the vacancy, runs one tick, and dies before any write.
      const decider = await startScheduleNode(settings('app-1', '1h'));
      nodes.push(decider);
      const firstAfter = await eventually("the deciding node's run", () => starts(historyFile).find((e) => e.node === 'app-1'), { timeoutMs: 30_000, intervalMs: 50 });
      await decider.kill();
      killedAt.set(decider.pid, Date.now());
      nodes.splice(nodes.indexOf(decider), 1);
      const left = await startScheduleNode(settings('app-2', '300ms'));
      nodes.push(left);
      // The instants of the outage: after the last run before it, before the deciding node's run.
      const expected: number[] = [];
      for (let tick = lastBefore + 2; tick < firstAfter.tick; tick += 2) expected.push(tick * 1000);
      expect(expected.length).toBeGreaterThanOrEqual(3);
      // A run whose node was SIGKILLed before its record was written may be said missed: it left no trace.
      const killed = { at: killedAt, recordMs: 2_000 };
      const check = await eventually('every instant of the outage said', () => {
        const found = checkMissed(readHistory(historyFile), SCHEDULE_JOB, killed);
        return expected.every((at) => found.instants.includes(at)) ? found : undefined;
      }, { timeoutMs: 40_000, intervalMs: 200 });
      expect(check.violations).toEqual([]);
      const alerts = readHistory(historyFile).filter((e) => e.type === 'alert' && e.kind === 'missed');
      expect([...new Set(alerts.map((a) => a.node))]).toEqual(['app-2']);
      process.stdout.write(`missed slots on ${on}, deciding node killed: ${expected.length} outage instant(s) said once each by app-2 (${check.instants.length} in all), 0 by the killed node\n`);
    } finally {
      await store.close();
    }
  });
});

/**
 * A skip on purpose is not a miss, with real processes: a paused job's instants are noted paused and alert nothing,
 * and a job whose semaphore no live node may take is said unrunnable once for the cluster, its instants never missed.
 */
describe.each(STORES)('skips on purpose in the slot ledger, with real processes on $on', ({ on, target, backend, module, fresh }) => {
  const nodes: NodeProcess[] = [];
  let operatorNode: TestNode | undefined;
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
    await operatorNode?.close();
    operatorNode = undefined;
  });

  async function cluster(name: string, definition: { name: string; duration: string; acquirerPattern?: string }) {
    const historyFile = newHistoryFile(name);
    const mapPrefix = uniquePrefix(name);
    await fresh(mapPrefix);
    const settings = (node: string): ScheduleNodeSettings => ({
      name: node, historyFile, mapPrefix, cluster: target(),
      job: { semaphore: definition.name, cron: '*/2 * * * * *', duration: definition.duration, runMs: 100, definitions: [definition], flushInterval: '300ms', alerts: 'library' },
    });
    nodes.push(...(await Promise.all(['app-1', 'app-2'].map((node) => startScheduleNode(settings(node))))));
    const store = new HistoryRecordStore(backend(mapPrefix));
    await store.connect();
    const verdicts = async (verdict: string) => ((await store.read(SCHEDULE_JOB))?.history.slots ?? []).filter((r) => r.verdict === verdict).reduce((n, r) => n + r.count, 0);
    const alerts = (kind: string) => readHistory(historyFile).filter((e) => e.type === 'alert' && e.kind === kind);
    return { historyFile, mapPrefix, store, verdicts, alerts };
  }

  it('notes a pause as paused: no missed alert for its instants, before or after the resume', async () => {
    const { historyFile, mapPrefix, store, verdicts, alerts } = await cluster('ledger-pause', { name: 'sched-paused', duration: '2s' });
    try {
      await eventually('two runs', () => starts(historyFile).length >= 2, { timeoutMs: 30_000, intervalMs: 100 });
      operatorNode = await startNode({ ...module(mapPrefix), identity: { acquirer: 'operator', group: 'default' }, mapPrefix });
      const operator = new Operator(historyFile, operatorNode.get(SemaphoreAdminService));
      expect((await operator.edit('pause', 'sched-paused')).ok).toBe(true);
      const pausedAt = Date.now();
      await eventually('three instants paused', () => Date.now() > pausedAt + 6_500, { timeoutMs: 10_000, intervalMs: 100 });
      expect((await operator.edit('resume', 'sched-paused')).ok).toBe(true);
      const resumedAt = Date.now();
      await eventually('the pause in the ledger', async () => (await verdicts('paused')) >= 3, { timeoutMs: 30_000, intervalMs: 200 });
      // Every instant of the pause settled and judged (settle: two flushes and two 5 s store deadlines).
      await eventually('the instants after the resume judged', async () => ((await store.read(SCHEDULE_JOB))?.history.judgedThrough ?? 0) > resumedAt, { timeoutMs: 40_000, intervalMs: 200 });
      expect(alerts('missed')).toEqual([]);
      expect(checkMissed(readHistory(historyFile), SCHEDULE_JOB).violations).toEqual([]);
      process.stdout.write(`paused on ${on}: ${await verdicts('paused')} instant(s) noted paused, 0 said missed\n`);
    } finally {
      await store.close();
    }
  });

  it('says once for the cluster that no live node may run a job, and none of its instants missed', async () => {
    const { store, verdicts, alerts } = await cluster('ledger-nobody', { name: 'sched-nobody', duration: '2s', acquirerPattern: 'nobody' });
    try {
      await eventually('unrunnable said', () => alerts('unrunnable').length > 0, { timeoutMs: 30_000, intervalMs: 100 });
      await eventually('four instants noted', async () => (await verdicts('noEligibleNode')) >= 4, { timeoutMs: 30_000, intervalMs: 200 });
      expect(alerts('unrunnable')).toHaveLength(1);
      expect(alerts('missed')).toEqual([]);
      process.stdout.write(`no eligible node on ${on}: said once by ${alerts('unrunnable')[0].node} for 2 nodes, ${await verdicts('noEligibleNode')} instant(s) noted, 0 missed\n`);
    } finally {
      await store.close();
    }
  });
});

describe.each(STORES)('runtime schedules upserted by replicas deploying at once, with real processes on $on', ({ on, target, backend, fresh }) => {
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
  });

  it('loses and doubles none of 20 schedules two replicas upsert concurrently with different versions; each fires once per instant', async () => {
    const historyFile = newHistoryFile('runtime-upserts');
    const mapPrefix = uniquePrefix('runtime-upserts');
    await fresh(mapPrefix);
    const start = (name: string, version: number) => startScheduleNode({
      name, historyFile, mapPrefix, cluster: target(),
      job: { semaphore: 'rt-unused', cron: '0 0 0 1 1 *', duration: '3s', runMs: 0 },
      env: { RUNTIME: JSON.stringify({ count: 20, version, rounds: 3 }) },
    });
    nodes.push(...(await Promise.all([start('app-1', 1), start('app-2', 2)])));
    type Edit = { type: 'edit'; semaphore: string; args: [number]; result: { outcome: string; revision: number } };
    const edits = () => readHistory(historyFile).filter((e): e is Edit & { at: number; node: string; pid: number; op: string; startedAt: number; ok: boolean } => e.type === 'edit');
    await eventually('every upsert answered', () => edits().length === 2 * 20 * 3, { timeoutMs: 30_000, intervalMs: 200 });
    const settledAt = Date.now();
    await eventually('two instants of every schedule after the writes', () =>
      Array.from({ length: 20 }, (_, i) => `rt-${i}`).every((id) => starts(historyFile).filter((e) => e.job === id && e.at > settledAt + 1_000).length >= 2), { timeoutMs: 30_000, intervalMs: 200 });

    const store = new ScheduleRecordStore(backend(mapPrefix));
    await store.connect();
    try {
      const live = (await store.list()).map((v) => v.record!).filter((r) => r.definition !== null);
      expect(live.map((r) => r.id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `rt-${i}`).sort());
      for (const record of live) {
        const writes = edits().filter((e) => e.semaphore === record.id && e.result.outcome !== 'unchanged');
        // None lost: every effective write has its own revision; the stored one is the newest, with its data.
        expect(new Set(writes.map((w) => w.result.revision)).size).toBe(writes.length);
        const newest = writes.reduce((a, b) => (b.result.revision > a.result.revision ? b : a));
        expect(record.revision).toBe(newest.result.revision);
        expect(record.definition!.data).toEqual({ version: newest.args[0] });
      }
    } finally {
      await store.close();
    }
    const perInstant = new Map<string, number>();
    for (const s of starts(historyFile)) perInstant.set(`${s.job}@${s.tick}`, (perInstant.get(`${s.job}@${s.tick}`) ?? 0) + 1);
    expect([...perInstant].filter(([, n]) => n > 1)).toEqual([]);
    expect(checkHistory(readHistory(historyFile), { permits: 1 }).violations).toEqual([]);
    process.stdout.write(`runtime upserts on ${on}: 120 upserts from 2 processes at once, 20 schedules stored, ${perInstant.size} runs, 0 doubled\n`);
  });
});
