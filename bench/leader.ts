/*
 * The leader-election rows of npm run bench (issue 10): failover after a crash (SIGKILL), handover at a graceful
 * stop (SIGTERM) and the steady-state cost for the whole cluster. Every node is a real process
 * (bench/leader-node.ts: a Nest application context with the module on the bench member), as in the multi-process
 * tests; the bench process only starts, signals and reads them.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp, type AppProcess } from '../test/support/app-process';
import { eventually } from '../test/support/eventually';
import { percentile, round, type BenchRow } from './bench-stats';

const NODE_SCRIPT = join(__dirname, 'leader-node.ts');
const ELECTION = 'leader';

/** The settings one group of nodes runs with. */
export interface LeaderSettings {
  leaseMs: number;
  maxClockSkewMs: number;
  presenceIntervalMs: number;
}

/** The failover rows: a realistic short lease, so five crashes fit in well under a minute. */
export const FAILOVER_SETTINGS: LeaderSettings = { leaseMs: 3000, maxClockSkewMs: 200, presenceIntervalMs: 1000 };
/** The steady-state rows: the module's defaults (10 s lease, presence every 5 s, 500 ms skew bound). */
export const STEADY_SETTINGS: LeaderSettings = { leaseMs: 10_000, maxClockSkewMs: 500, presenceIntervalMs: 5000 };

const FAILOVER_RUNS = Number(process.env.BENCH_FAILOVER_RUNS ?? 5);
/** Four presence intervals and three leader renewals (a write every two thirds of the lease) of the defaults. */
const STEADY_WINDOW_MS = Number(process.env.BENCH_STEADY_WINDOW_MS ?? 20_000);
const HANDOVER_TARGET_MS = 1000;

interface Elected {
  node: LeaderNode;
  epoch: number;
  /** Unix ms, read by the new leader when its leader work started. */
  at: number;
}

/** One node process and what it printed. */
class LeaderNode {
  private constructor(readonly app: AppProcess) {}

  static async start(name: string, env: NodeJS.ProcessEnv): Promise<LeaderNode> {
    return new LeaderNode(await startApp(NODE_SCRIPT, name, env));
  }

  get name(): string {
    return this.app.name;
  }

  exited(): boolean {
    return this.app.child.exitCode !== null || this.app.child.signalCode !== null;
  }

  private lines(tag: string): string[][] {
    return this.app.output().split('\n').filter((l) => l.startsWith(`${tag} `)).map((l) => l.trim().split(' ').slice(1));
  }

  /** Every term this node started, oldest first. */
  elections(): Array<{ epoch: number; at: number }> {
    return this.lines('ELECTED').map(([epoch, at]) => ({ epoch: Number(epoch), at: Number(at) }));
  }

  /** Its stores' operation counters now (asks by SIGUSR2 and waits for the answer). */
  async operations(): Promise<{ at: number; permits: number; presence: number }> {
    const before = this.lines('OPS').length;
    this.app.child.kill('SIGUSR2');
    const [at, permits, presence] = await eventually(
      `${this.name} to report its operation counts (exit ${this.app.child.exitCode ?? this.app.child.signalCode}; output: ${this.app.output().slice(-2000)})`,
      () => this.lines('OPS')[before],
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    return { at: Number(at), permits: Number(permits), presence: Number(presence) };
  }

  async signal(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    if (this.exited()) return;
    const exit = once(this.app.child, 'exit');
    this.app.child.kill(signal);
    await exit;
  }
}

/** A group of node processes on one map prefix, with replacements numbered on. */
class LeaderGroup {
  readonly nodes: LeaderNode[] = [];
  private started = 0;

  constructor(
    private readonly cluster: { clusterName: string; addresses: string[] },
    private readonly mapPrefix: string,
    private readonly settings: LeaderSettings,
  ) {}

  async add(count: number): Promise<void> {
    const env: NodeJS.ProcessEnv = {
      MAP_PREFIX: this.mapPrefix,
      GATEKEEPER_HZ_CLUSTER_NAME: this.cluster.clusterName,
      GATEKEEPER_HZ_MEMBERS: this.cluster.addresses.join(','),
      ELECTION,
      LEASE: String(this.settings.leaseMs),
      PRESENCE_INTERVAL: String(this.settings.presenceIntervalMs),
      MAX_CLOCK_SKEW: String(this.settings.maxClockSkewMs),
    };
    const names = Array.from({ length: count }, () => `leader-node-${this.started++}`);
    this.nodes.push(...(await Promise.all(names.map((name) => LeaderNode.start(name, env)))));
  }

  /** The newest term started by a live node with an epoch above `after`. */
  electedAfter(after: number): Elected | undefined {
    let best: Elected | undefined;
    for (const node of this.nodes) {
      if (node.exited()) continue;
      for (const e of node.elections()) if (e.epoch > after && (!best || e.epoch > best.epoch)) best = { node, ...e };
    }
    return best;
  }

  async waitForLeader(after: number, timeoutMs: number): Promise<Elected> {
    return eventually(`a leader with an epoch above ${after}`, () => this.electedAfter(after), { timeoutMs, intervalMs: 10 });
  }

  async remove(node: LeaderNode, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    await node.signal(signal);
    this.nodes.splice(this.nodes.indexOf(node), 1);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.splice(0).map((n) => n.signal('SIGTERM')));
  }
}

function failoverRow(scenario: 'leader-failover-kill' | 'leader-handover', samples: number[], settings: LeaderSettings, boundMs: number): BenchRow {
  return {
    scenario, system: 'gatekeeper', nodes: 3, semaphores: 1, runs: samples.length,
    p50Ms: round(percentile(samples, 50), 0), p99Ms: round(percentile(samples, 99), 0), opsPerSec: null,
    storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
    failoverMs: { p50: round(percentile(samples, 50), 0)!, max: Math.max(...samples), boundMs, runs: samples },
    settings,
  };
}

/**
 * Three nodes; the leader is SIGKILLed (its lease lapses: the next node is elected after expiry plus the skew
 * bound) or SIGTERMed (a graceful stop releases: the next node is elected at once), `FAILOVER_RUNS` times each. The
 * time is from the signal to the start of the new leader's leader work, both read in real time on this machine.
 * Each signal lands at a random point of the leader's renewal cycle; a replacement keeps three nodes.
 */
export async function leaderFailover(cluster: { clusterName: string; addresses: string[] }, prefix: string, log: (line: string) => void): Promise<BenchRow[]> {
  const settings = FAILOVER_SETTINGS;
  const group = new LeaderGroup(cluster, `${prefix}-failover`, settings);
  const rows: BenchRow[] = [];
  try {
    await group.add(3);
    let leader = await group.waitForLeader(0, 30_000);
    for (const scenario of ['leader-failover-kill', 'leader-handover'] as const) {
      const signal = scenario === 'leader-failover-kill' ? 'SIGKILL' : 'SIGTERM';
      const samples: number[] = [];
      for (let run = 0; run < FAILOVER_RUNS; run++) {
        await sleep(Math.random() * settings.leaseMs);
        leader = group.electedAfter(leader.epoch - 1) ?? leader; // still the same term (no spurious change)
        const signalledAt = Date.now();
        const stopped = group.remove(leader.node, signal);
        const next = await group.waitForLeader(leader.epoch, 4 * settings.leaseMs + 10_000);
        await stopped;
        samples.push(next.at - signalledAt);
        log(`  ${signal} ${leader.node.name} (epoch ${leader.epoch}) -> ${next.node.name} elected (epoch ${next.epoch}) after ${next.at - signalledAt} ms`);
        leader = next;
        await group.add(1);
        await sleep(settings.presenceIntervalMs); // the replacement announced and every view is settled
      }
      const bound = scenario === 'leader-failover-kill' ? settings.leaseMs + 2 * settings.maxClockSkewMs + Math.floor(settings.leaseMs / 3) : HANDOVER_TARGET_MS;
      rows.push(failoverRow(scenario, samples, settings, bound));
    }
  } finally {
    await group.stop();
  }
  return rows;
}

/**
 * The whole cluster's store operations per second with one election and presence on, nothing else to do: 3 nodes,
 * then 3 more (6), each measured over `STEADY_WINDOW_MS` after a warm-up, from the nodes' own store counters
 * (permit store: the leader's renewals and any candidate reads; presence store: each node's renewal and re-read).
 */
export async function leaderSteady(cluster: { clusterName: string; addresses: string[] }, prefix: string, log: (line: string) => void): Promise<BenchRow[]> {
  const settings = STEADY_SETTINGS;
  const group = new LeaderGroup(cluster, `${prefix}-steady`, settings);
  const rows: BenchRow[] = [];
  const snapshot = () => Promise.all(group.nodes.map((n) => n.operations()));
  try {
    for (const nodes of [3, 6]) {
      await group.add(nodes - group.nodes.length);
      await group.waitForLeader(0, 30_000);
      // Past boot: every node's first announce, read and stand are done, one presence interval and a renewal ago.
      await sleep(settings.presenceIntervalMs + 1000);
      const before = await snapshot();
      await sleep(STEADY_WINDOW_MS);
      const after = await snapshot();
      let permits = 0;
      let presence = 0;
      for (let i = 0; i < after.length; i++) {
        const seconds = (after[i].at - before[i].at) / 1000;
        permits += (after[i].permits - before[i].permits) / seconds;
        presence += (after[i].presence - before[i].presence) / seconds;
      }
      const total = permits + presence;
      rows.push({
        scenario: 'leader-steady', system: 'gatekeeper', nodes, semaphores: 1, runs: 1,
        p50Ms: null, p99Ms: null, opsPerSec: round(total, 2),
        storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
        storeOpsPerSec: { total: round(total, 2)!, permits: round(permits, 2)!, presence: round(presence, 2)!, perNode: round(total / nodes, 3)!, windowS: STEADY_WINDOW_MS / 1000 },
        settings,
      });
      log(`  ${nodes} nodes: ${round(total, 2)} store ops/s (presence ${round(presence, 2)}, elections ${round(permits, 2)})`);
    }
  } finally {
    await group.stop();
  }
  return rows;
}
