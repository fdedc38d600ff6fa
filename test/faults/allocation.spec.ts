import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import {
  checkHistory, newHistoryFile, Operator, readHistory, recordNemesis, resourceNames, runsOf, startAllocationNode, useFaultCluster,
  type AllocationNodeSettings, type HistoryEvent, type NodeProcess, type Run,
} from '../harness';
import { eventually } from '../support/eventually';
import { testCluster, testClientConfig, uniquePrefix } from '../support/test-cluster';

/*
 * Allocation (issue 11) on the fault harness: real node processes (allocation-app.ts) take part in allocation
 * 'queues' and write every resource they own as a run (token = the resource's epoch), acting on it until onRevoked
 * returns; the nemesis joins, kills, freezes and cuts them off; the checker reads only the history.
 */
const LEASE_MS = 2_000;
const SKEW_MS = 100;
const DELAY_MS = 500;
const REVOKE_MS = 300;
const RESOURCES = 100;
/** A crashed or frozen node's resources have new owners within its lease plus the skew bound, plus the claim (one write) and the work's start. */
const MOVE_BOUND_MS = LEASE_MS + SKEW_MS + 400;
const ALLOCATION = { name: 'queues', lease: LEASE_MS, rebalanceDelay: DELAY_MS };
/**
 * Nodes that are up settle within the rebalance delay plus a lease (the plan's writes, every owner's revoke and the
 * claims take a few round trips and one onRevoked each; the lease is the slack a loaded machine gets).
 */
const SETTLE_BOUND_MS = DELAY_MS + LEASE_MS;
/** After a fault ends, no resource stays unowned longer than a lease lapsing, a stand-back and a joiner's delay. */
const UNOWNED_BOUND_MS = LEASE_MS + SKEW_MS + 2 * DELAY_MS + REVOKE_MS + 400;

const print = (line: string) => process.stdout.write(`allocation: ${line}\n`);

function settings(historyFile: string, mapPrefix: string, cluster: AllocationNodeSettings['cluster']): Omit<AllocationNodeSettings, 'name'> {
  return { historyFile, cluster, mapPrefix, maxClockSkew: SKEW_MS, allocation: ALLOCATION, resources: RESOURCES, revokeMs: REVOKE_MS, effectEveryMs: 200 };
}

const resourceRuns = (history: HistoryEvent[]): Run[] => runsOf(history).filter((r) => r.semaphore.startsWith('queues/'));

/** Who owns each resource now by the history: runs neither ended nor told, of processes still alive. */
function owners(history: HistoryEvent[], alive: number[]): Map<string, number[]> {
  const map = new Map<string, number[]>();
  for (const r of resourceRuns(history)) {
    if (r.outcome !== 'unfinished' || r.lostAt !== undefined || !alive.includes(r.pid)) continue;
    map.set(r.job, [...(map.get(r.job) ?? []), r.pid]);
  }
  return map;
}

function shares(history: HistoryEvent[], alive: number[]): number[] {
  const counts = new Map(alive.map((pid) => [pid, 0]));
  for (const [, pids] of owners(history, alive)) for (const pid of pids) counts.set(pid, (counts.get(pid) ?? 0) + 1);
  return alive.map((pid) => counts.get(pid)!);
}

/** Every resource owned exactly once by the live processes, with shares of ⌊R/N⌋ or ⌈R/N⌉. */
function settled(history: HistoryEvent[], alive: number[]): number[] | false {
  const map = owners(history, alive);
  if (map.size !== RESOURCES || [...map.values()].some((p) => p.length !== 1)) return false;
  const s = shares(history, alive);
  return Math.max(...s) - Math.min(...s) <= 1 && s;
}

/**
 * Runs that began while an earlier run of the same resource still vouched for it: before the last `validUntil` it
 * recorded and before it was told (signal) or ended. The checker sees only what holders did; a frozen holder does
 * nothing, and its lease's promise says whether the next owner started too early.
 */
function earlyStarts(history: HistoryEvent[]): string[] {
  const runs = resourceRuns(history);
  const byResource = new Map<string, Run[]>();
  for (const r of runs) byResource.set(r.job, [...(byResource.get(r.job) ?? []), r]);
  return [...byResource.values()].flatMap((list) => list.flatMap((t) => list.filter((e) => e !== t && e.start.at <= t.start.at).flatMap((e) => {
    const end = e.events.find((x) => x.type === 'end');
    // Given up when onRevoked returned within its lease: it vouched until then. Otherwise until its last promise ran out.
    const promised = Math.max(...e.events.map((x) => {
      if (x.type === 'start') return x.valid ? x.validUntil : x.at;
      return x.type === 'effect' ? x.validUntil ?? x.at : -Infinity;
    }));
    const vouched = end?.valid ? end.at : promised;
    return t.start.at < vouched ? [`${t.job}: ${t.node}/${t.pid} started epoch ${t.token} ${vouched - t.start.at} ms before ${e.node}/${e.pid}'s epoch ${e.token} stopped vouching`] : [];
  })));
}

/** Never two owners of a resource at once (the checker, and the leases' promises), epochs growing per resource, nothing done past a lease. */
function expectSafe(history: HistoryEvent[]): ReturnType<typeof checkHistory> {
  const checked = checkHistory(history.filter((e) => !('semaphore' in e) || String(e.semaphore).startsWith('queues/')), { permits: 1 });
  expect(checked.violations).toEqual([]);
  expect(earlyStarts(history)).toEqual([]);
  // Every act within the lease it was made under (by the lease's own clock promise).
  expect(resourceRuns(history).flatMap((t) => t.events.filter((e) => e.type === 'effect' && e.validUntil !== undefined && e.at > e.validUntil)
    .map((e) => `${t.node}/${t.pid} ${t.job} acted ${e.at - (e as { validUntil: number }).validUntil} ms past its lease`))).toEqual([]);
  return checked;
}

/**
 * The longest time, over resources, that nobody owned a resource between `from` and `to`: from the end (or last
 * vouched moment) of one owner to the start of the next.
 */
function longestUnowned(history: HistoryEvent[], from: number, to: number): number {
  const byResource = new Map<string, Run[]>();
  for (const r of resourceRuns(history)) byResource.set(r.job, [...(byResource.get(r.job) ?? []), r]);
  let longest = 0;
  for (const runs of byResource.values()) {
    const spans = runs.map((r) => ({ from: r.start.at, to: r.outcome === 'unfinished' ? Infinity : r.events.at(-1)!.at })).sort((a, b) => a.from - b.from);
    let covered = from;
    for (const span of spans) {
      if (span.to < from) continue;
      if (span.from > covered) longest = Math.max(longest, Math.min(span.from, to) - covered);
      covered = Math.max(covered, span.to);
      if (covered >= to) break;
    }
    if (covered < to) longest = Math.max(longest, to - covered);
  }
  return longest;
}

/** How long after `from` each resource in `ids` got a new owner (its first start after `from`). */
function movedAfter(history: HistoryEvent[], ids: string[], from: number): number[] {
  return ids.map((id) => (resourceRuns(history).find((r) => r.job === id && r.start.at > from)?.start.at ?? Infinity) - from);
}

describe('allocation among real processes on the shared member', () => {
  const nodes: NodeProcess[] = [];
  const historyFile = newHistoryFile('allocation');
  const mapPrefix = uniquePrefix('allocation');
  const common = settings(historyFile, mapPrefix, testCluster());
  const alive = () => nodes.filter((n) => !n.exited()).map((n) => n.pid);

  beforeAll(async () => {
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startAllocationNode({ ...common, name, group: name === 'node-a' ? 'blue' : 'green' })))));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
  });

  it('spreads 100 resources 33/33/34 over three processes, then a fourth takes exactly 25 and all end with 25', async () => {
    const started = Date.now();
    const three = await eventually('33/33/34', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
    expect([...three].sort()).toEqual([33, 33, 34]);
    const convergedMs = Date.now() - started;
    expect(convergedMs).toBeLessThanOrEqual(SETTLE_BOUND_MS);

    const before = owners(readHistory(historyFile), alive());
    nodes.push(await startAllocationNode({ ...common, name: 'node-d', group: 'green' }));
    const joinedAt = Date.now(); // the joiner is up: connected and taking part
    const four = await eventually('25 × 4', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
    expect(four).toEqual([25, 25, 25, 25]);
    expect(Date.now() - joinedAt).toBeLessThanOrEqual(SETTLE_BOUND_MS);
    const history = readHistory(historyFile);
    const after = owners(history, alive());
    const moved = resourceNames(RESOURCES).filter((id) => before.get(id)![0] !== after.get(id)![0]);
    expect(moved).toHaveLength(25);
    expectSafe(history);
    print(`3 processes: 33/33/34 ${convergedMs} ms after they were up; a 4th joined: ${moved.length} moved (minimum 25), 25 × 4 ${Date.now() - joinedAt} ms after it was up (bound ${SETTLE_BOUND_MS})`);
  });

  it('SIGKILL of one: only its 25 move, each within lease + skew + a claim, and no resource ever had two owners', async () => {
    const history0 = readHistory(historyFile);
    const victim = nodes.find((n) => n.name === 'node-b')!;
    const its = [...owners(history0, alive())].filter(([, pids]) => pids[0] === victim.pid).map(([id]) => id);
    expect(its).toHaveLength(25);
    const before = owners(history0, alive());
    await victim.kill();
    const killedAt = readHistory(historyFile).filter((e) => e.type === 'nemesis' && e.action === 'kill').at(-1)!.at;
    const rest = await eventually('even over three', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
    expect([...rest].sort()).toEqual([33, 33, 34]);
    const history = readHistory(historyFile);
    const after = owners(history, alive());
    const moved = resourceNames(RESOURCES).filter((id) => before.get(id)![0] !== after.get(id)![0]);
    expect(moved.sort()).toEqual(its.sort());
    const delays = movedAfter(history, its, killedAt);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MOVE_BOUND_MS);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(LEASE_MS / 3); // nobody took them before the lease could lapse
    expectSafe(history);
    print(`SIGKILL: its 25 moved ${Math.min(...delays)}-${Math.max(...delays)} ms after the kill (bound ${MOVE_BOUND_MS}), nothing else moved`);
  });

  it('SIGSTOP past the lease, then SIGCONT: its resources move once its lease lapsed, and it acts on none of them again', async () => {
    const victim = nodes.find((n) => n.name === 'node-c')!;
    const its = [...owners(readHistory(historyFile), alive())].filter(([, pids]) => pids[0] === victim.pid).map(([id]) => id);
    victim.freeze();
    const frozenAt = Date.now();
    await eventually('its resources to move', () => {
      const h = readHistory(historyFile);
      return movedAfter(h, its, frozenAt).every((ms) => Number.isFinite(ms));
    }, { timeoutMs: 15_000 });
    victim.resume();
    const resumedAt = Date.now();
    await eventually('settled again with it back', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
    const history = readHistory(historyFile);
    const delays = movedAfter(history, its, frozenAt);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(LEASE_MS / 3);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MOVE_BOUND_MS);
    // After the resume, no effect on an epoch it held before the freeze.
    const stale = resourceRuns(history).filter((r) => r.pid === victim.pid && r.start.at < frozenAt && r.events.some((e) => e.type === 'effect' && e.at > resumedAt));
    expect(stale.map((r) => r.job)).toEqual([]);
    expectSafe(history);
    print(`SIGSTOP: its ${its.length} moved ${Math.min(...delays)}-${Math.max(...delays)} ms into the freeze (bound ${MOVE_BOUND_MS}); after SIGCONT it acted on none of them`);
  });

  it('a live group edit moves the excluded node’s resources to the others (onRevoked first), and back', async () => {
    const store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
    await store.connect({ clock: systemClock });
    try {
      const operator = new Operator(historyFile, new SemaphoreAdmin(store, systemClock, { clockSkewMs: SKEW_MS }));
      const blue = nodes.find((n) => n.name === 'node-a')!;
      await eventually('settled, blue with its share', () => settled(readHistory(historyFile), alive()) && shares(readHistory(historyFile), [blue.pid])[0] > 0, { timeoutMs: 20_000 });
      await operator.edit('update', 'allocation:queues', { groupPattern: 'green' });
      await eventually('blue empty, even over green', () => {
        const h = readHistory(historyFile);
        const live = alive().filter((pid) => pid !== blue.pid);
        return shares(h, [blue.pid])[0] === 0 && settled(h, live);
      }, { timeoutMs: 20_000 });
      await operator.edit('update', 'allocation:queues', { groupPattern: '.*' });
      await eventually('blue back', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
      const history = readHistory(historyFile);
      expectSafe(history);
      const edits = history.filter((e) => e.type === 'edit');
      print(`group edit: blue excluded and readmitted, ${edits.length} edits, 0 overlaps`);
    } finally {
      await store.close();
    }
  });
});

describe('allocation through a member freeze and connection resets (own members behind proxies)', () => {
  const fault = useFaultCluster(1, { proxied: true });
  const historyFile = newHistoryFile('allocation-faults');

  it('never has two owners of a resource, and owns everything again within a lease of the fault ending', async () => {
    const { cluster, nodes } = fault;
    const common = settings(historyFile, uniquePrefix('allocation-faults'), { clusterName: cluster.clusterName, addresses: cluster.addresses });
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startAllocationNode({ ...common, name })))));
    const alive = () => nodes.filter((n) => !n.exited()).map((n) => n.pid);
    await eventually('settled', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });

    recordNemesis(historyFile, 'freeze', 'member 0');
    await cluster.freeze(0);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 800)); // longer than the lease: every part must end
    await cluster.resume(0);
    const resumedAt = recordNemesis(historyFile, 'resume', 'member 0').at;
    await eventually('settled after the freeze', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
    const afterFreeze = Date.now() - resumedAt;

    const resetsStart = Date.now();
    for (let i = 0; i < 3; i++) {
      const target = nodes[i % nodes.length];
      recordNemesis(historyFile, 'reset', target.name);
      cluster.proxy(0).reset({ pid: target.pid });
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
    }
    const resetsFrom = resetsStart;
    await eventually('settled after the resets', () => settled(readHistory(historyFile), alive()), { timeoutMs: 20_000 });
    const history = readHistory(historyFile);
    const checked = expectSafe(history);
    expect(afterFreeze).toBeLessThanOrEqual(UNOWNED_BOUND_MS);
    const unownedAfterFreeze = longestUnowned(history, resumedAt, resetsFrom);
    const unownedThroughResets = longestUnowned(history, resetsFrom, Date.now());
    expect(unownedThroughResets).toBeLessThanOrEqual(UNOWNED_BOUND_MS);
    print(`member frozen ${LEASE_MS + 800} ms, then 3 connection resets: 0 overlaps in ${checked.stats.runs} ownership runs; settled ${afterFreeze} ms `
      + `after the resume (bound ${UNOWNED_BOUND_MS}; longest unowned after it ${unownedAfterFreeze} ms); through the resets no resource unowned longer than `
      + `${unownedThroughResets} ms (bound ${UNOWNED_BOUND_MS})`);
  });
});
