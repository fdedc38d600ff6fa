/*
 * The allocation rows of npm run bench (issue 11): a join (3 -> 4 nodes), a crash (SIGKILL, 4 -> 3) and the
 * steady-state cost, with 100 and 1000 resources. Every gatekeeper node is a real process (bench/allocation-node.ts);
 * the bench process starts and signals them and reads the allocation's entry to see who owns what. Baseline on the
 * same member: a dalloc-style allocator (seed 003 as its code has it: one global lock around one whole-map value,
 * shares rounded up, no leases), run by in-process clients, each node its own client.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type ClientConfig, type IMap } from 'hazelcast-client';
import { allocationSemaphore } from '../lib/allocation/allocation';
import { allocationStatus } from '../lib/allocation/allocation-status';
import { HazelcastPermitStore } from '../lib/cli/hazelcast-permit.store';
import { systemClock } from '../lib/core/clock';
import type { AllocationStatus } from '../lib';
import { startApp, type AppProcess } from '../test/support/app-process';
import { eventually } from '../test/support/eventually';
import { operationsOf } from './node-operations';
import { round, type BenchRow } from './bench-stats';

const NODE_SCRIPT = join(__dirname, 'allocation-node.ts');
const SIZES = [100, 1000];
const STEADY_WINDOW_MS = Number(process.env.BENCH_STEADY_WINDOW_MS ?? 20_000);

/** Settings of the join and crash rows: a short lease, so a crash is over in seconds. */
export const MOVE_SETTINGS = { leaseMs: 3000, maxClockSkewMs: 200, rebalanceDelayMs: 500 };
/** Settings of the steady rows: the module's defaults (10 s lease, 3 s delay, 500 ms skew bound). */
export const STEADY_ALLOCATION_SETTINGS = { leaseMs: 10_000, maxClockSkewMs: 500, rebalanceDelayMs: 3000 };
type Settings = typeof MOVE_SETTINGS;
type Cluster = { clusterName: string; addresses: string[] };

const resourceSet = (count: number) => Array.from({ length: count }, (_, i) => `queue-${String(i).padStart(4, '0')}`);

/**
 * The fewest resources that must change hands to go from `counts` (what each node that stays holds; nodes that
 * leave are not in it, their `lost` resources always move) to an even spread over `counts.length` nodes: the
 * larger shares go to the nodes that hold most, and only what exceeds a node's share moves.
 */
export function minimalMoves(counts: number[], total: number, lost = 0): number {
  const base = Math.floor(total / counts.length);
  const extra = total % counts.length;
  const sorted = [...counts].sort((a, b) => b - a);
  return lost + sorted.reduce((sum, c, i) => sum + Math.max(0, c - (base + (i < extra ? 1 : 0))), 0);
}

/** Who owns each resource, from an allocation status. */
function ownership(status: AllocationStatus): Map<string, string> {
  return new Map(status.owners.filter((o) => o.participating).flatMap((o) => o.resources.map((id) => [id, o.instance] as const)));
}

/** Resources that changed hands: owned before and after, by different nodes (a resource nobody owned before is not moved). */
function changed(before: Map<string, string>, after: Map<string, string>): number {
  return [...after].filter(([id, owner]) => before.has(id) && before.get(id) !== owner).length;
}

/** Store operations the nodes made between two snapshots, over the nodes alive at both (a killed node's count is gone with it). */
function opsBetween(before: Array<number | null>, after: Array<number | null>): number {
  return after.reduce<number>((sum, n, i) => (n === null || before[i] === null || before[i] === undefined ? sum : sum + n - before[i]!), 0);
}

/** One node process. */
class AllocationNode {
  constructor(readonly app: AppProcess) {}

  exited(): boolean {
    return this.app.child.exitCode !== null || this.app.child.signalCode !== null;
  }

  operations(): Promise<number> {
    return operationsOf(this.app);
  }

  async signal(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    if (this.exited()) return;
    const exit = once(this.app.child, 'exit');
    this.app.child.kill(signal);
    await exit;
  }
}

/** Node processes on one map prefix, and a reader of the allocation's entry. */
class AllocationGroup {
  readonly nodes: AllocationNode[] = [];
  private started = 0;

  private constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly reader: HazelcastPermitStore,
    private readonly skewMs: number,
  ) {}

  static async create(cluster: Cluster, mapPrefix: string, settings: Settings, resources: number): Promise<AllocationGroup> {
    const reader = new HazelcastPermitStore({ clientConfig: { clusterName: cluster.clusterName, network: { clusterMembers: cluster.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } }, mapPrefix });
    await reader.connect({ clock: systemClock });
    return new AllocationGroup({
      MAP_PREFIX: mapPrefix,
      GATEKEEPER_HZ_CLUSTER_NAME: cluster.clusterName,
      GATEKEEPER_HZ_MEMBERS: cluster.addresses.join(','),
      RESOURCES: String(resources),
      LEASE: String(settings.leaseMs),
      REBALANCE_DELAY: String(settings.rebalanceDelayMs),
      MAX_CLOCK_SKEW: String(settings.maxClockSkewMs),
    }, reader, settings.maxClockSkewMs);
  }

  async add(count: number): Promise<void> {
    const names = Array.from({ length: count }, () => `alloc-node-${this.started++}`);
    this.nodes.push(...(await Promise.all(names.map(async (name) => new AllocationNode(await startApp(NODE_SCRIPT, name, this.env))))));
  }

  async status(): Promise<AllocationStatus> {
    const semaphore = allocationSemaphore('queues');
    return allocationStatus(semaphore, (await this.reader.read(semaphore)).entry, Date.now(), this.skewMs);
  }

  /** Polls the entry until `nodes` nodes take part, every resource has one owner, skew ≤ 1 and the plan is carried out. */
  async settled(nodes: number, resources: number, timeoutMs = 60_000): Promise<AllocationStatus> {
    return eventually(`${nodes} nodes sharing ${resources} resources`, async () => {
      const s = await this.status();
      const owned = s.owners.filter((o) => o.participating);
      return owned.length === nodes && s.resources === resources && s.unowned === 0 && s.skew <= 1 && s.lastRebalance?.settled === true
        && owned.reduce((sum, o) => sum + o.resources.length, 0) === resources && s;
    }, { timeoutMs, intervalMs: 10 });
  }

  /** Each node's operation counter now, in node order (null for a node that exited). */
  async operations(): Promise<Array<number | null>> {
    return Promise.all(this.nodes.map((n) => (n.exited() ? Promise.resolve(null) : n.operations())));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.splice(0).map((n) => n.signal('SIGTERM')));
    await this.reader.close();
  }
}

function moveRow(
  scenario: 'allocation-join' | 'allocation-kill', system: 'gatekeeper' | 'dalloc-style', nodes: number, resources: number,
  m: { moved: number; minimalMoves: number; convergeMs: number | null; skew: number; unowned: number; storeOpsPerRebalance: number | null },
  settings?: Settings,
): BenchRow {
  return {
    scenario, system, nodes, semaphores: 1, runs: 1, p50Ms: null, p99Ms: null, opsPerSec: null, storeOpsPerTick: null,
    roundTripsPerDecision: null, exactlyOncePct: null, resources, ...m, ...(settings && { allocationSettings: settings }),
  };
}

/**
 * Join and crash with each size: three nodes settle; a fourth joins (converge time from its READY: booted and
 * taking part, so the rebalance delay is included); then one of the four is SIGKILLed (converge time from the kill:
 * its lease plus the skew bound must pass first). Store operations of a rebalance are the nodes' own counters over
 * the window, the joiner's boot included.
 */
export async function allocationMoves(cluster: Cluster, prefix: string, log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const resources of SIZES) {
    const group = await AllocationGroup.create(cluster, `${prefix}-moves-${resources}`, MOVE_SETTINGS, resources);
    try {
      await group.add(3);
      let before = await group.settled(3, resources);
      const opsBeforeJoin = await group.operations();
      await group.add(1);
      const joinedAt = Date.now();
      let after = await group.settled(4, resources);
      const joinMs = Date.now() - joinedAt;
      const opsAfterJoin = await group.operations();
      const counts = before.owners.filter((o) => o.participating).map((o) => o.resources.length);
      rows.push(moveRow('allocation-join', 'gatekeeper', 4, resources, {
        moved: changed(ownership(before), ownership(after)), minimalMoves: minimalMoves([...counts, 0], resources), convergeMs: joinMs, skew: after.skew,
        unowned: after.unowned, storeOpsPerRebalance: opsBetween([...opsBeforeJoin, 0], opsAfterJoin),
      }, MOVE_SETTINGS));
      log(`  ${resources} resources, join 3 -> 4: ${rows.at(-1)!.moved} moved (minimum ${rows.at(-1)!.minimalMoves}), settled ${joinMs} ms after the joiner was up, ${rows.at(-1)!.storeOpsPerRebalance} store ops`);

      before = after;
      const victim = group.nodes[1];
      const victimInstance = before.owners.find((o) => o.participating && o.acquirer === victim.app.name)!;
      const opsBeforeKill = await group.operations();
      const killedAt = Date.now();
      await victim.signal('SIGKILL');
      after = await group.settled(3, resources);
      const killMs = Date.now() - killedAt;
      const opsAfterKill = await group.operations();
      const survivors = before.owners.filter((o) => o.participating && o !== victimInstance).map((o) => o.resources.length);
      rows.push(moveRow('allocation-kill', 'gatekeeper', 3, resources, {
        moved: changed(ownership(before), ownership(after)), minimalMoves: minimalMoves(survivors, resources, victimInstance.resources.length),
        convergeMs: killMs, skew: after.skew, unowned: after.unowned,
        storeOpsPerRebalance: opsBetween(opsBeforeKill, opsAfterKill),
      }, MOVE_SETTINGS));
      log(`  ${resources} resources, SIGKILL 4 -> 3: ${rows.at(-1)!.moved} moved (minimum ${rows.at(-1)!.minimalMoves}), settled ${killMs} ms after the kill (lease ${MOVE_SETTINGS.leaseMs} + skew ${MOVE_SETTINGS.maxClockSkewMs})`);
    } finally {
      await group.stop();
    }
    rows.push(...(await dallocMoves(cluster, `${prefix}-dalloc-${resources}`, resources, log)));
  }
  return rows;
}

/** Three nodes at the module's defaults, each size, over a quiet window: the whole cluster's store operations per second. */
export async function allocationSteady(cluster: Cluster, prefix: string, log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const resources of SIZES) {
    const group = await AllocationGroup.create(cluster, `${prefix}-steady-${resources}`, STEADY_ALLOCATION_SETTINGS, resources);
    try {
      await group.add(3);
      await group.settled(3, resources);
      await sleep(2000);
      const before = await group.operations();
      const from = Date.now();
      await sleep(STEADY_WINDOW_MS);
      const after = await group.operations();
      const total = opsBetween(before, after) / ((Date.now() - from) / 1000);
      rows.push({
        scenario: 'allocation-steady', system: 'gatekeeper', nodes: 3, semaphores: 1, runs: 1, p50Ms: null, p99Ms: null, opsPerSec: round(total, 2),
        storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null, resources,
        storeOpsPerSec: { total: round(total, 2)!, permits: round(total, 2)!, presence: 0, perNode: round(total / 3, 3)!, windowS: STEADY_WINDOW_MS / 1000 },
        allocationSettings: STEADY_ALLOCATION_SETTINGS,
      });
      log(`  ${resources} resources, 3 nodes: ${round(total, 2)} store ops/s for the whole cluster (${round(total / 3, 3)} per node)`);
    } finally {
      await group.stop();
    }
  }
  return rows;
}

/** The dalloc-style baseline: a node of the seed's allocator, counting its round trips. */
class DallocNode {
  ops = 0;
  constructor(
    readonly name: string,
    private readonly client: Client,
    private readonly map: IMap<string, string>,
  ) {}

  static async start(name: string, config: ClientConfig, mapName: string): Promise<DallocNode> {
    const client = await Client.newHazelcastClient(config);
    return new DallocNode(name, client, await client.getMap<string, string>(mapName));
  }

  /**
   * As the seed's code does on a membership event: take the one global lock, read the one whole-map value, keep at
   * most ⌈R/N⌉ (rounded up), fill up from what nobody holds, write it back, unlock.
   */
  async rebalance(resources: readonly string[], nodes: number): Promise<void> {
    await this.map.lock('allocation');
    this.ops++;
    try {
      const raw = await this.map.get('allocation');
      this.ops++;
      const all = (raw ? JSON.parse(raw) : {}) as Record<string, string[]>;
      const mine = all[this.name] ?? [];
      const allowed = Math.ceil(resources.length / nodes);
      if (mine.length > allowed) all[this.name] = mine.slice(0, allowed);
      else {
        const taken = new Set(Object.values(all).flat());
        all[this.name] = [...mine, ...resources.filter((id) => !taken.has(id)).slice(0, allowed - mine.length)];
      }
      await this.map.set('allocation', JSON.stringify(all));
      this.ops++;
    } finally {
      await this.map.unlock('allocation');
      this.ops++;
    }
  }

  async owned(): Promise<Record<string, string[]>> {
    const raw = await this.map.get('allocation');
    return raw ? JSON.parse(raw) : {};
  }

  close(): Promise<void> {
    return this.client.shutdown();
  }
}

/**
 * The baseline on the same workloads: three nodes take their shares; a fourth joins and every node rebalances once
 * (its membership event); then one dies and the survivors rebalance once. What one round leaves is what the
 * design leaves until the next membership event: rounding up gives skew above one, a newcomer that claims before
 * the others gave up their surplus gets less, and a dead node's resources stay assigned to it (no lease).
 */
async function dallocMoves(cluster: Cluster, mapName: string, resources: number, log: (line: string) => void): Promise<BenchRow[]> {
  const config: ClientConfig = { clusterName: cluster.clusterName, network: { clusterMembers: cluster.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  const set = resourceSet(resources);
  const nodes = await Promise.all([0, 1, 2].map((i) => DallocNode.start(`dalloc-${i}`, config, mapName)));
  const rows: BenchRow[] = [];
  const summary = (all: Record<string, string[]>, live: DallocNode[]) => {
    const shares = live.map((n) => all[n.name]?.length ?? 0);
    const owned = new Set(live.flatMap((n) => all[n.name] ?? []));
    const owners = new Map(Object.entries(all).flatMap(([name, ids]) => ids.map((id) => [id, name] as const)));
    return { shares, skew: Math.max(...shares) - Math.min(...shares), unowned: set.filter((id) => !owned.has(id)).length, owners };
  };
  try {
    for (const n of nodes) await n.rebalance(set, 3);
    const before = summary(await nodes[0].owned(), nodes);
    const joiner = await DallocNode.start('dalloc-3', config, mapName);
    nodes.push(joiner);
    const opsBefore = nodes.reduce((s, n) => s + n.ops, 0);
    const joinStarted = Date.now();
    // The newcomer first (its join event reaches it first), then the others, concurrently: the lock orders them.
    await joiner.rebalance(set, 4);
    await Promise.all(nodes.slice(0, 3).map((n) => n.rebalance(set, 4)));
    const joinMs = Date.now() - joinStarted;
    const afterJoin = summary(await nodes[0].owned(), nodes);
    rows.push(moveRow('allocation-join', 'dalloc-style', 4, resources, {
      moved: changed(before.owners, afterJoin.owners), minimalMoves: minimalMoves([...before.shares, 0], resources),
      convergeMs: afterJoin.unowned === 0 && afterJoin.skew <= 1 ? joinMs : null, skew: afterJoin.skew, unowned: afterJoin.unowned,
      storeOpsPerRebalance: nodes.reduce((s, n) => s + n.ops, 0) - opsBefore,
    }));
    log(`  dalloc-style, ${resources} resources, join 3 -> 4: shares ${afterJoin.shares.join('/')} (skew ${afterJoin.skew}), ${afterJoin.unowned} unowned after the round, ${rows.at(-1)!.moved} moved`);

    const [dead] = nodes.splice(1, 1);
    await dead.close();
    const opsBeforeKill = nodes.reduce((s, n) => s + n.ops, 0);
    const killStarted = Date.now();
    await Promise.all(nodes.map((n) => n.rebalance(set, 3)));
    const killMs = Date.now() - killStarted;
    const afterKill = summary(await nodes[0].owned(), nodes);
    rows.push(moveRow('allocation-kill', 'dalloc-style', 3, resources, {
      moved: changed(afterJoin.owners, afterKill.owners),
      minimalMoves: minimalMoves(afterJoin.shares.filter((_, i) => i !== 1), resources, afterJoin.shares[1]),
      convergeMs: afterKill.unowned === 0 && afterKill.skew <= 1 ? killMs : null, skew: afterKill.skew, unowned: afterKill.unowned,
      storeOpsPerRebalance: nodes.reduce((s, n) => s + n.ops, 0) - opsBeforeKill,
    }));
    log(`  dalloc-style, ${resources} resources, crash 4 -> 3: shares ${afterKill.shares.join('/')}, ${afterKill.unowned} still assigned to the dead node (no lease)`);
  } finally {
    await Promise.all(nodes.map((n) => n.close()));
  }
  return rows;
}
