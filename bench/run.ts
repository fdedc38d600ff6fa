/*
 * npm run bench: the gatekeeper against a real Hazelcast member, with the pessimistic-lock and redlock baselines
 * on the same machine and workloads, in one process run. Prints a table and writes bench/results/latest.json
 * (plus a dated copy). Not part of npm test.
 *
 * Only some groups of scenarios: `npm run bench -- leader cron` (or BENCH_ONLY=leader,cron), among decisions, tasks,
 * cron, overhead and leader (leader-failover and leader-steady), postgres and tasks-postgres (which need no member
 * and no Redis: run alone, they start neither), and redis (ours on the bench's Redis beside redlock, BullMQ and the raw
 * Redis floors: run alone, it starts a Redis and no member). A filtered run prints its table and writes its JSON to the temp directory, leaving
 * bench/results alone.
 *
 * The baselines (redlock, BullMQ, raw Redis) need a Redis server: the bench starts `redis-server` on a free port and
 * refuses to run without one, unless `--no-baselines` says a local run without them is meant (its JSON never goes
 * to bench/results).
 */
import 'reflect-metadata';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Client, type ClientConfig } from 'hazelcast-client';
import Redis from 'ioredis';
import { ClusterSingleton, GatekeeperModule, HazelcastBackend, LeaderOnly } from '../lib';
import { declareNewStore } from '../lib/permits/new-store';
import { GATEKEEPER_HISTORY_STORE, GATEKEEPER_LEADER_RUNS } from '../lib/nest/gatekeeper.constants';
import type { HistoryStore } from '../lib/schedules/history-store';
import { SemaphoreAdmin } from '../lib/permits/semaphore-admin';
import { systemClock } from '../lib/core/clock';
import { validateDefinition } from '../lib/permits/definition.validator';
import { startApp, type AppProcess } from '../test/support/app-process';
import { freePort } from '../test/support/free-port';
import { startMemberProcess, type MemberProcess } from '../test/support/member-process';
import { percentile, round, timed, type BenchRow, TASK_WORKER_COUNTS } from './bench-stats';
import { schedulesBench } from './schedules';
import { gatekeeperHistoryNode, gatekeeperNode, pessimisticNode, redlockNode, type BenchNode } from './bench-systems';
import { leaderFailover, leaderSteady } from './leader';
import { allocationMoves, allocationSteady } from './allocation';
import { taskRows } from './tasks';
import type { BenchProcesses } from './task-submitters';
import { heapAllocations } from './heap-allocations';
import { commandOf, cpuWindow, descendantsOf, type WindowCpu } from './proc-cpu';
import { floorRows, listenedFloorRow } from './floors';
import { advisoryLockNode, gatekeeperPostgresHistoryNode, gatekeeperPostgresNode, postgresFloorRows, startBenchPostgres } from './postgres-systems';
import { pgTaskRows } from './pg-tasks';
import { flushRedis, gatekeeperRedisNode, prepareRedisPrefix, redisUrlOf, setAppendOnly } from './redis-systems';
import { redisSubmitRows } from './redis-submits';
import { redisTaskRows } from './redis-tasks';
import { redisFloorRows } from './floors';
import { hazelcastIdleTarget, idleRows, postgresIdleTarget, redisIdleTarget } from './idle-cluster';
import { writeDocTables } from './write-doc-tables';
import { fencedWriteRows } from './fenced-writes';

const TICK_MS = 1000;
const LISTENING_NODE = join(__dirname, 'listening-node.ts');
const TICKS = Number(process.env.BENCH_TICKS ?? 10);
/** Ticks before the measured window, for every system alike: the first ticks pay for cold code and a young heap (a fresh 1-node release window costs 2-4x a warm one). */
const WARMUP_TICKS = Number(process.env.BENCH_WARMUP_TICKS ?? 10);
/**
 * The run-history rows measure a whole minute: every node writes its skipped-tick counts at most once a minute and
 * the holder its runs every 10 s, so a shorter window counts each node's first write as if it came every window.
 */
const HISTORY_TICKS = Number(process.env.BENCH_HISTORY_TICKS ?? 60);
/** The PostgreSQL run-history rows, nodes x jobs (`BENCH_PG_HISTORY=1x1,3x100`): fewer than on Hazelcast, each row being a minute and more. */
const PG_HISTORY_SIZES = (process.env.BENCH_PG_HISTORY ?? '1x1,3x1,6x1,3x100').split(',').filter(Boolean).map((size) => size.split('x').map(Number) as [number, number]);
const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 2000);
/** The decision rows' semaphores: the one the other node is denied, one per grant, and 50 the warm-up cycles through. */
const HELD_NAME = 'd-held';
const FREE_NAMES = Array.from({ length: DECISIONS }, (_, i) => `d-free-${i}`);
const WARM_NAMES = Array.from({ length: 50 }, (_, i) => `d-warm-${i}`);
/** The listened floor's semaphores: as many as the grant row's, and 50 to warm up on. */
const FLOOR_NAMES = Array.from({ length: DECISIONS }, (_, i) => `d-floor-${i}`);
const FLOOR_WARM_NAMES = Array.from({ length: 50 }, (_, i) => `d-floorwarm-${i}`);
const rows: BenchRow[] = [];
/** The member's JVM, the Redis server and this process, for the CPU columns (set in main). */
let procs: BenchProcesses = { bench: process.pid, member: [] };
/** Which store a system's calls reach, for its CPU per unit of work. */
const storeOf = (system: BenchRow['system']): 'member' | 'redis' | 'postgres' =>
  system === 'redlock' || system === 'bullmq' || system === 'redis-raw' || REDIS_OURS.includes(system) ? 'redis' : POSTGRES_SYSTEMS.includes(system) ? 'postgres' : 'member';
/** Ours on Redis (the redis group): its store is the bench's Redis. */
const REDIS_OURS: ReadonlyArray<BenchRow['system']> = ['gatekeeper-redis', 'gatekeeper-redis+aof'];
const POSTGRES_SYSTEMS: ReadonlyArray<BenchRow['system']> = ['gatekeeper-postgres', 'gatekeeper-postgres+history', 'advisory-lock', 'postgres-raw', 'pg-boss', 'graphile-worker', 'bullmq-postgres'];

/** CPU per unit of work over a window: the bench process (the nodes) as clients, the system's store as store. */
export function cpuPerUnit(system: BenchRow['system'], cpu: WindowCpu, unit: NonNullable<BenchRow['cpuMsPer']>['unit'], count: number): BenchRow['cpuMsPer'] {
  // On PostgreSQL: the server's whole process tree (procs.postgres, set while the PostgreSQL rows run).
  const store = cpu[storeOf(system)];
  if (cpu.bench === null || store === null) return null;
  const clients = cpu.bench + (cpu.workers ?? 0);
  return { unit, clients: round(clients / count, 4)!, store: round(store / count, 4)!, total: round((clients + store) / count, 4)! };
}
const log = (line: string) => process.stdout.write(`${line}\n`);
const GROUPS = ['decisions', 'cron', 'cron-history', 'schedules', 'overhead', 'leader', 'leader-failover', 'leader-steady', 'allocation', 'allocation-moves', 'allocation-steady', 'tasks', 'postgres', 'tasks-postgres', 'redis', 'idle', 'fencing'] as const;
/** The groups that run on PostgreSQL only: a run of nothing else starts no member and no Redis. */
const POSTGRES_GROUPS: ReadonlyArray<(typeof GROUPS)[number]> = ['postgres', 'tasks-postgres', 'fencing'];
const NO_BASELINES = process.argv.includes('--no-baselines');
const only = [...process.argv.slice(2).filter((a) => a !== '--no-baselines'), ...(process.env.BENCH_ONLY ?? '').split(',')].map((g) => g.trim()).filter(Boolean);
for (const group of only) if (!(GROUPS as readonly string[]).includes(group)) throw new Error(`Unknown bench group "${group}" (known: ${GROUPS.join(', ')})`);
const runs = (group: (typeof GROUPS)[number]) =>
  only.length === 0 || only.includes(group) || (group.startsWith('leader-') && only.includes('leader')) || (group.startsWith('allocation-') && only.includes('allocation'));
const LEADER_SCENARIOS: ReadonlyArray<BenchRow['scenario']> = ['leader-failover-kill', 'leader-handover', 'leader-steady'];
const ALLOCATION_SCENARIOS: ReadonlyArray<BenchRow['scenario']> = ['allocation-join', 'allocation-kill', 'allocation-steady'];
const TASK_SCENARIOS: ReadonlyArray<BenchRow['scenario']> = ['floor-task-lifecycle', 'tasks-throughput', 'tasks-latency', 'tasks-detection', 'tasks-burst', 'tasks-backlog'];
const PG_TASK_SCENARIOS: ReadonlyArray<BenchRow['scenario']> = ['pg-tasks-throughput', 'pg-tasks-latency', 'pg-tasks-backlog'];

function decisionRow(scenario: BenchRow['scenario'], system: BenchRow['system'], samples: number[], trips: number): BenchRow {
  const total = samples.reduce((a, b) => a + b, 0);
  return {
    scenario, system, nodes: 1, semaphores: 1, runs: samples.length,
    p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)),
    opsPerSec: round(samples.length / (total / 1000), 0), storeOpsPerTick: null,
    roundTripsPerDecision: round(trips / samples.length, 2), exactlyOncePct: null,
  };
}

/**
 * Single decisions on a warm client: what a decision that reaches the store costs. The deny row is the other node's
 * read; for the holder's rows the other node listens from a process of its own (`listener`, gatekeeper only: the
 * baselines' nodes have no view), so its event handling is not on the holder's event loop, as in production.
 */
async function decisions(
  system: BenchRow['system'],
  make: (name: string) => Promise<BenchNode>,
  listener?: () => Promise<AppProcess>,
  /** Runs while the other node still listens, once the holder closed: the listened floor row. */
  whileListening?: (listening: AppProcess | undefined) => Promise<void>,
): Promise<void> {
  const holder = await make('holder');
  const other = await make('other');
  let closed = false;
  let otherClosed = false;
  let listening: AppProcess | undefined;
  try {
    await holder.acquire(HELD_NAME, 60_000);
    // The listening node starts before the warm-up, so it hears the warm-up's writes as a replica that has run for a
    // while has: started after it, its first events ran cold code in the measured grants (the listened floor, which
    // runs last, never had that), and its JIT competed with the holder and the member for the two cores.
    listening = await listener?.();
    // Warm both clients, the listening node and the member's JIT on every kind of call before measuring.
    for (let i = 0; i < 1000; i++) {
      await other.acquire(HELD_NAME, 60_000);
      await holder.acquire(WARM_NAMES[i % WARM_NAMES.length], 60_000);
      await holder.release(WARM_NAMES[i % WARM_NAMES.length]);
    }
    const measure = async (scenario: BenchRow['scenario'], node: BenchNode, op: (i: number) => Promise<unknown>, listening?: AppProcess) => {
      const before = node.roundTrips();
      // The listening node's CPU counts with the clients': it is work every write causes.
      const cpu = cpuWindow({ ...procs, ...(listening?.child.pid !== undefined && { workers: [listening.child.pid] }) });
      const samples = await timed(DECISIONS, op);
      const used = cpu.stop();
      rows.push({ ...decisionRow(scenario, system, samples, node.roundTrips() - before), processCpuMs: used, cpuMsPer: cpuPerUnit(system, used, 'decision', DECISIONS) });
    };
    await measure('decision-deny', other, () => other.acquire(HELD_NAME, 60_000));
    await other.close();
    otherClosed = true;
    await measure('decision-grant', holder, (i) => holder.acquire(FREE_NAMES[i], 60_000), listening);
    await measure('decision-refresh', holder, (i) => holder.acquire(FREE_NAMES[i], 60_000), listening);
    await measure('decision-release', holder, (i) => holder.release(FREE_NAMES[i]), listening);
    await holder.close();
    closed = true;
    await whileListening?.(listening);
  } finally {
    await Promise.all([closed || holder.close(), otherClosed || other.close(), listening?.stop()]);
  }
}

/** N nodes x M semaphores ticking every second, as N replicas of an app with M cron jobs would. */
async function cron(system: BenchRow['system'], mode: 'hold' | 'release', nodes: number, semaphores: number, make: (name: string) => Promise<BenchNode>, prefix: string, ticks = TICKS): Promise<void> {
  const members = await Promise.all(Array.from({ length: nodes }, (_, i) => make(`node-${i}`)));
  const keys = Array.from({ length: semaphores }, (_, i) => `${prefix}-job-${i}`);
  const runs = new Map<string, number>();
  // Round trips and CPU over the whole measured window, sleeps included: work a node does in the background
  // between ticks (keep-alive, batched history writes) costs as much as work on the tick's path.
  const allTrips = () => members.reduce((sum, m) => sum + m.roundTrips(), 0);
  let tripsStart = 0;
  let cpuStart = process.cpuUsage();
  let window = cpuWindow(procs);
  let heap = heapAllocations();
  for (let tick = 0; tick < ticks + WARMUP_TICKS; tick++) {
    const next = Date.now() + TICK_MS;
    const measured = tick >= WARMUP_TICKS;
    if (tick === WARMUP_TICKS) {
      tripsStart = allTrips();
      cpuStart = process.cpuUsage();
      window = cpuWindow(procs);
      heap = heapAllocations();
    }
    await Promise.all(members.flatMap((m) => keys.map(async (key) => {
      if (!(await m.acquire(key, mode === 'hold' ? 10_000 : 5_000))) return;
      if (measured) runs.set(`${key}@${tick}`, (runs.get(`${key}@${tick}`) ?? 0) + 1);
      if (mode === 'release') await m.release(key, TICK_MS - 200);
    })));
    await sleep(Math.max(0, next - Date.now()));
  }
  const trips = allTrips() - tripsStart;
  const allocated = heap.bytes();
  const used = process.cpuUsage(cpuStart);
  const processCpuMs = window.stop();
  const cpu = (used.user + used.system) / 1000;
  const jobTicks = ticks * semaphores;
  const once = [...runs.values()].filter((n) => n === 1).length;
  rows.push({
    scenario: mode === 'hold' ? 'cron-hold' : 'cron-release', system, nodes, semaphores, runs: ticks,
    p50Ms: null, p99Ms: null, opsPerSec: null,
    storeOpsPerTick: round(trips / jobTicks, 3),
    roundTripsPerDecision: round(trips / (jobTicks * nodes), 3),
    exactlyOncePct: round((100 * once) / jobTicks, 2),
    cpuMsPerTickPerNode: round(cpu / (ticks * nodes), 3),
    processCpuMs,
    cpuMsPer: cpuPerUnit(system, processCpuMs, 'job tick', jobTicks),
    // The nodes run in this process: what it allocated, per node and job tick.
    heapKBPer: { unit: 'job tick', clients: round(allocated / 1024 / (jobTicks * nodes), 1)! },
  });
  log(`  ${system} ${mode} ${nodes}x${semaphores}: ${round(trips / jobTicks, 3)} store ops per job tick, exactly once ${round((100 * once) / jobTicks, 2)}%`);
  await Promise.all(members.map((m) => m.close()));
}

@Injectable()
class OverheadJobs {
  count = 0;
  bare(): void {
    this.count++;
  }
  @ClusterSingleton('overhead', '1m')
  guarded(): void {
    this.count++;
  }
}

/** What @ClusterSingleton adds to a tick of a job this node holds, against the same method bare. */
async function decoratorOverhead(config: ClientConfig, mapPrefix: string): Promise<void> {
  const app = await Test.createTestingModule({
    imports: [GatekeeperModule.forRoot({ identity: { acquirer: 'bench' }, hazelcast: { clientConfig: config, mapPrefix } })],
    providers: [OverheadJobs],
  }).setLogger(false as never).compile();
  await app.init();
  const jobs = app.get(OverheadJobs);
  await jobs.guarded();
  for (const [system, call] of [['bare-cron', () => jobs.bare()], ['gatekeeper', () => jobs.guarded()]] as const) {
    const samples = await timed(DECISIONS, async () => call());
    rows.push({ ...decisionRow('decorator-overhead', system, samples, 0), roundTripsPerDecision: null });
  }
  await app.close();
}

@Injectable()
class LeaderOverheadJobs {
  count = 0;
  bare(): void {
    this.count++;
  }
  @LeaderOnly('overhead')
  async led(): Promise<void> {
    this.count++;
  }
}

/**
 * What @LeaderOnly adds to a call on the leader, against the same method bare: with the run history off (its run log
 * replaced by one that does nothing) and on (each run noted in memory, written in the background). The history row's
 * round trips are the history store's calls during the calls themselves: none, whatever the count.
 */
async function leaderOverhead(config: ClientConfig, mapPrefix: string): Promise<void> {
  for (const system of ['gatekeeper', 'gatekeeper+history'] as const) {
    let builder = Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ identity: { acquirer: 'bench' }, hazelcast: { clientConfig: config, mapPrefix: `${mapPrefix}-${system}` }, elections: [{ name: 'overhead', lease: '1m' }] })],
      providers: [LeaderOverheadJobs],
    }).setLogger(false as never);
    if (system === 'gatekeeper') builder = builder.overrideProvider(GATEKEEPER_LEADER_RUNS).useValue({ started: () => ({}), finished: () => undefined, skippedTick: () => undefined });
    const app = await builder.compile();
    await app.init();
    const jobs = app.get(LeaderOverheadJobs);
    const history = app.get<HistoryStore>(GATEKEEPER_HISTORY_STORE);
    for (let i = 0; i < 200 && jobs.count === 0; i++) {
      await jobs.led();
      if (jobs.count === 0) await sleep(50); // not elected yet
    }
    if (system === 'gatekeeper') {
      const samples = await timed(DECISIONS, async () => jobs.bare());
      rows.push({ ...decisionRow('leader-only-overhead', 'bare-cron', samples, 0), roundTripsPerDecision: null });
    }
    const before = history.operationCount();
    const samples = await timed(DECISIONS, () => jobs.led());
    rows.push(decisionRow('leader-only-overhead', system, samples, history.operationCount() - before));
    await app.close();
  }
}

const REDIS_MISSING = 'redis-server was not found on PATH: the redlock, BullMQ and raw Redis baselines need it.\n'
  + 'Install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis) and run again, or pass\n'
  + '--no-baselines for a local run without them (its results are not written to bench/results).';

/** Starts a throwaway Redis on a free loopback port; undefined with --no-baselines, an error when there is none. */
async function startRedis(force = false): Promise<{ port: number; pid: number; stop: () => Promise<void> } | undefined> {
  // force: the redis group's own rows need the server even with --no-baselines.
  if (NO_BASELINES && !force) {
    log('--no-baselines: redlock, BullMQ and raw Redis rows are left out');
    return undefined;
  }
  if (spawnSync('redis-server', ['--version']).status !== 0) throw new BenchSetupError(REDIS_MISSING);
  const port = await freePort();
  // A directory of its own: the redis group's one row with the append-only file on writes it there.
  const dir = mkdtempSync(join(tmpdir(), 'gatekeeper-bench-redis-'));
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  const ping = async () => {
    const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined); // not up yet: connect() rejects, which is the answer
    try {
      await redis.connect();
      return (await redis.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      redis.disconnect();
    }
  };
  for (let i = 0; i < 100 && !(await ping()); i++) {
    if (child.exitCode !== null) throw new BenchSetupError(`redis-server exited with code ${child.exitCode} on port ${port}`);
    await sleep(50);
  }
  if (!(await ping())) throw new BenchSetupError(`redis-server did not answer on port ${port} within 5 s`);
  return { port, pid: child.pid!, stop: async () => { if (child.exitCode === null) child.kill('SIGTERM'); await exited; rmSync(dir, { recursive: true, force: true }); } };
}

/** A problem with the machine rather than the code: printed as it is, without a stack. */
class BenchSetupError extends Error {}

/** `clients + store` CPU ms per unit of work, or '-'. */
const cpuCell = (r: BenchRow) => (r.cpuMsPer ? `${r.cpuMsPer.clients}+${r.cpuMsPer.store}` : null);

/** A decision row's p50 and p99 against the raw compare-and-set of its store in the same run. */
function vsFloor(r: BenchRow): string | null {
  if (r.scenario !== 'decision-grant' && r.scenario !== 'decision-refresh' && r.scenario !== 'decision-deny' && r.scenario !== 'decision-release') return null;
  const floorSystem = { redis: 'redis-raw', postgres: 'postgres-raw', member: 'hazelcast-raw' }[storeOf(r.system)];
  const floor = rows.find((o) => o.scenario === 'floor-cas' && o.system === floorSystem);
  if (!floor?.p50Ms || !floor.p99Ms || r.p50Ms === null || r.p99Ms === null) return null;
  // Ours also against the same compare-and-set on a map with a gatekeeper's listeners (the views' entry events).
  const listened = r.system === 'gatekeeper' || r.system === 'gatekeeper-postgres' ? rows.find((o) => o.scenario === 'floor-cas-listened' && o.system === floorSystem) : undefined;
  const withListeners = listened?.p50Ms && listened.p99Ms ? ` (listened ${round(r.p50Ms / listened.p50Ms, 1)}x/${round(r.p99Ms / listened.p99Ms, 1)}x)` : '';
  return `${round(r.p50Ms / floor.p50Ms, 1)}x/${round(r.p99Ms / floor.p99Ms, 1)}x${withListeners}`;
}

function printTable(): void {
  // Each baseline against ours on the same store.
  const oursOn = (r: BenchRow) => (storeOf(r.system) === 'postgres' ? 'gatekeeper-postgres' : 'gatekeeper');
  // The run-history rows (60 ticks) against ours over as many ticks, not the cron rows' 10.
  const same = (o: BenchRow, r: BenchRow) => o.system === oursOn(r) && o.scenario === r.scenario && o.nodes === r.nodes && o.semaphores === r.semaphores;
  const ours = (r: BenchRow) => rows.find((o) => same(o, r) && o.runs === r.runs) ?? rows.find((o) => same(o, r));
  const ratio = (a: number | null | undefined, b: number | null | undefined) =>
    a == null || b == null ? '-' : b === 0 ? (a === 0 ? '1x' : `${a} vs 0`) : `${round(a / b, 1)}x`;
  const header = ['scenario', 'system', 'nodes', 'sems', 'p50 ms', 'p99 ms', 'ops/s', 'RT/decision', 'ops/job tick', 'once %', 'cpu ms/tick/node', 'cpu ms/op cli+store', 'vs ours', 'vs floor cas p50/p99'];
  const table = rows.filter((r) => !LEADER_SCENARIOS.includes(r.scenario) && !ALLOCATION_SCENARIOS.includes(r.scenario) && !TASK_SCENARIOS.includes(r.scenario) && !PG_TASK_SCENARIOS.includes(r.scenario) && r.group !== 'redis').map((r) => {
    const base = ours(r);
    const vs = r.system === 'gatekeeper' || r.system === 'gatekeeper-postgres' || r.system === 'bare-cron' || r.system.endsWith('-raw') ? '' : r.storeOpsPerTick !== null ? ratio(r.storeOpsPerTick, base?.storeOpsPerTick) + ' ops' : ratio(r.p50Ms, base?.p50Ms) + ' p50';
    return [r.scenario, r.system, r.nodes, r.semaphores, r.p50Ms, r.p99Ms, r.opsPerSec, r.roundTripsPerDecision, r.storeOpsPerTick, r.exactlyOncePct, r.cpuMsPerTickPerNode ?? null, cpuCell(r), vs, vsFloor(r)].map((v) => (v === null ? '-' : String(v)));
  });
  if (table.length === 0) return;
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const line of [header, ...table]) log(line.map((cell, i) => cell.padEnd(widths[i])).join('  '));
}

/** The leader rows have columns of their own. */
function printLeaderTable(): void {
  const header = ['scenario', 'nodes', 'runs', 'lease/skew/presence ms', 'failover p50 ms', 'max ms', 'bound ms', 'store ops/s', 'presence', 'elections', 'per node'];
  const table = rows.filter((r) => LEADER_SCENARIOS.includes(r.scenario)).map((r) => [
    r.scenario, r.nodes, r.runs, r.settings ? `${r.settings.leaseMs}/${r.settings.maxClockSkewMs}/${r.settings.presenceIntervalMs}` : null,
    r.failoverMs?.p50, r.failoverMs?.max, r.failoverMs?.boundMs,
    r.storeOpsPerSec?.total, r.storeOpsPerSec?.presence, r.storeOpsPerSec?.permits, r.storeOpsPerSec?.perNode,
  ].map((v) => (v === null || v === undefined ? '-' : String(v))));
  if (table.length === 0) return;
  log('');
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const line of [header, ...table]) log(line.map((cell, i) => cell.padEnd(widths[i])).join('  '));
}

/** The allocation rows have columns of their own. */
function printAllocationTable(): void {
  const header = ['scenario', 'system', 'nodes', 'resources', 'moved', 'minimal', 'converge ms', 'skew', 'unowned', 'ops/rebalance', 'store ops/s'];
  const table = rows.filter((r) => ALLOCATION_SCENARIOS.includes(r.scenario)).map((r) => [
    r.scenario, r.system, r.nodes, r.resources, r.moved, r.minimalMoves, r.convergeMs, r.skew, r.unowned, r.storeOpsPerRebalance, r.storeOpsPerSec?.total,
  ].map((v) => (v === null || v === undefined ? '-' : String(v))));
  if (table.length === 0) return;
  log('');
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const line of [header, ...table]) log(line.map((cell, i) => cell.padEnd(widths[i])).join('  '));
}

/** The tasks rows have columns of their own. */
function printTaskTable(): void {
  const header = ['scenario', 'system', 'nodes', 'tasks', 'tasks/s', 'p50 ms', 'p99 ms', 'RT/task', 'cpu ms/task wk+store', 'bench cpu ms', 'per node', 'max share %', 'backlog', 'max ms', 'gap p50/p99', 'bytes/claim', 'idle ops/s/node', 'detection ms'];
  const table = rows.filter((r) => TASK_SCENARIOS.includes(r.scenario)).map((r) => [
    r.scenario, r.system, r.nodes, r.runs, r.tasksPerSec, r.p50Ms, r.p99Ms, r.roundTripsPerTask, cpuCell(r), r.processCpuMs?.bench, r.shares?.join('/'), r.maxSharePct, r.backlog, r.maxMs, r.claimGapMs ? `${r.claimGapMs.p50}/${r.claimGapMs.p99}` : null, r.bytesPerClaim,
    r.idleOpsPerSecPerNode, r.detectionMs,
  ].map((v) => (v === null || v === undefined ? '-' : String(v))));
  if (table.length === 0) return;
  log('');
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const line of [header, ...table]) log(line.map((cell, i) => cell.padEnd(widths[i])).join('  '));
}

/**
 * The tasks-postgres rows have columns of their own: ours against pg-boss and graphile-worker on one server. The
 * backlog rows (tasks: the claims measured; tasks/s: claims/s; p50/p99: the slot's cycle; cpu: per claim) add their
 * backlog, longest cycle, completion-to-start gap and bytes read per claim, and each system's ratio to its own row on
 * the near-empty queue.
 */
function printPgTaskTable(): void {
  const header = ['scenario', 'system', 'nodes', 'tasks', 'tasks/s', 'p50 ms', 'p99 ms', 'RT/task', 'pg queries/task', 'cpu ms/task workers+pg=total', 'bench cpu ms', 'per node', 'vs ours',
    'backlog', 'max ms', 'gap p50/p99', 'bytes/claim', 'vs empty queue'];
  const ours = (r: BenchRow) => rows.find((o) => o.system === 'gatekeeper-postgres' && o.scenario === r.scenario && o.nodes === r.nodes && o.backlog === r.backlog);
  const empty = (r: BenchRow) => (r.backlog ? rows.find((o) => o.system === r.system && o.scenario === r.scenario && o.backlog === 0) : undefined);
  const table = rows.filter((r) => PG_TASK_SCENARIOS.includes(r.scenario)).map((r) => {
    const base = ours(r);
    const vs = r.system === 'gatekeeper-postgres' || !base ? null
      : r.scenario === 'pg-tasks-throughput' ? (base.tasksPerSec ? `${round(r.tasksPerSec! / base.tasksPerSec, 2)}x tasks/s` : null)
        : base.p50Ms ? `${round(r.p50Ms! / base.p50Ms, 2)}x p50` : null;
    const zero = empty(r);
    const vsEmpty = !zero ? null
      : `${zero.p50Ms ? round(r.p50Ms! / zero.p50Ms, 2) : '-'}x p50, ${zero.p99Ms ? round(r.p99Ms! / zero.p99Ms, 2) : '-'}x p99, ${zero.bytesPerClaim && r.bytesPerClaim !== null && r.bytesPerClaim !== undefined ? round(r.bytesPerClaim / zero.bytesPerClaim, 2) : '-'}x bytes`;
    return [
      r.scenario, r.system, r.nodes, r.runs, r.tasksPerSec, r.p50Ms, r.p99Ms, r.roundTripsPerTask, r.pgQueriesPerTask,
      r.cpuMsPer ? `${r.cpuMsPer.clients}+${r.cpuMsPer.store}=${r.cpuMsPer.total}` : null, r.processCpuMs?.bench, r.shares?.join('/'), vs,
      r.backlog, r.maxMs, r.claimGapMs ? `${r.claimGapMs.p50}/${r.claimGapMs.p99}` : null, r.bytesPerClaim, vsEmpty,
    ].map((v) => (v === null || v === undefined ? '-' : String(v)));
  });
  if (table.length === 0) return;
  log('');
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const line of [header, ...table]) log(line.map((cell, i) => cell.padEnd(widths[i])).join('  '));
}

/**
 * The tasks-postgres rows, on a durable server of their own (bench/pg-tasks.ts); its postmaster's process tree is
 * the store of their CPU columns.
 */
async function pgTasksBench(): Promise<void> {
  const server = await startBenchPostgres();
  try {
    log(`tasks on PostgreSQL: gatekeeper-postgres, pg-boss, graphile-worker and BullMQ's PostgreSQL backend on one server; throughput (submit to completed, no-op handler) on ${TASK_WORKER_COUNTS.join(', ')} worker processes, whole-system CPU, round trips, latency at a steady rate`);
    if (server.serverPid === undefined) log('  the postmaster was not found: the CPU columns leave the server out');
    rows.push(...(await pgTaskRows(server.url, { ...procs, ...(server.serverPid !== undefined && { postgres: server.serverPid }) }, log)));
  } finally {
    await server.stop();
  }
}

/**
 * The PostgreSQL rows: decisions against the raw compare-and-set floor and a plain advisory lock, the cron
 * workload at 1, 3 and 6 nodes in both modes, and the run history's cost on held ticks (as the cron-history group on
 * Hazelcast, at PG_HISTORY_SIZES), on a durable server the bench starts.
 */
async function postgresBench(): Promise<void> {
  const server = await startBenchPostgres();
  // The server's whole process tree is the store of these rows' CPU columns.
  const before = procs;
  if (server.serverPid !== undefined) procs = { ...procs, postgres: server.serverPid };
  try {
    const prefix = `bench-${Date.now()}`;
    const admin = await gatekeeperPostgresNode('admin', server.url, prefix, false);
    const names = [HELD_NAME, ...FREE_NAMES, ...WARM_NAMES, ...[1, 3, 6].flatMap((n) => ['hold', 'release'].map((mode) => `pg-${mode}-${n}-job-0`)),
      ...PG_HISTORY_SIZES.flatMap(([n, m]) => ['g', 'h'].flatMap((kind) => Array.from({ length: m }, (_, i) => `pg-hold-${kind}-${n}-${m}-job-${i}`)))];
    const definitions = new SemaphoreAdmin(admin.store, systemClock);
    for (const name of names) await definitions.define(validateDefinition({ name, duration: name.startsWith('pg-hold') ? '10s' : '5s' }));
    await admin.close();
    log('PostgreSQL: decision latency (warm client, 1 node)');
    await decisions('gatekeeper-postgres', (n) => gatekeeperPostgresNode(n, server.url, prefix, false));
    await decisions('advisory-lock', () => advisoryLockNode(server.url));
    const [bare, listened] = await postgresFloorRows(server.url, DECISIONS);
    rows.push(bare, listened);
    log(`  postgres-raw: compare-and-set of a row by its text, a name per call, p50 ${bare.p50Ms} / p99 ${bare.p99Ms} ms; `
      + `with a NOTIFY trigger heard by another connection ${listened.p50Ms} / ${listened.p99Ms} ms`);
    log(`PostgreSQL: cron workload (${TICKS} measured ticks of ${TICK_MS} ms after ${WARMUP_TICKS} warm-up ticks)`);
    for (const nodes of [1, 3, 6]) {
      for (const mode of ['hold', 'release'] as const) {
        await cron('gatekeeper-postgres', mode, nodes, 1, (n) => gatekeeperPostgresNode(n, server.url, prefix), `pg-${mode}-${nodes}`);
        await cron('advisory-lock', mode, nodes, 1, () => advisoryLockNode(server.url), `pg-${mode}-${nodes}-a`);
      }
    }
    if (PG_HISTORY_SIZES.length) {
      // The run history's cost on a held tick, as the cron-history group: hold mode with and without every run recorded, in the same run.
      log(`PostgreSQL: run history on held ticks (${HISTORY_TICKS} measured ticks of ${TICK_MS} ms; history written every 10 s, skipped ticks every 60 s)`);
      for (const [nodes, semaphores] of PG_HISTORY_SIZES) {
        await cron('gatekeeper-postgres', 'hold', nodes, semaphores, (n) => gatekeeperPostgresNode(n, server.url, prefix), `pg-hold-g-${nodes}-${semaphores}`, HISTORY_TICKS);
        await cron('gatekeeper-postgres+history', 'hold', nodes, semaphores, (n) => gatekeeperPostgresHistoryNode(n, server.url, prefix), `pg-hold-h-${nodes}-${semaphores}`, HISTORY_TICKS);
      }
    }
  } finally {
    procs = before;
    await server.stop();
  }
}

/** The redis group's cron sizes: jobs per node (`BENCH_REDIS_CRON_JOBS=1,100`), each at 1, 3 and 6 nodes in both modes. */
const REDIS_CRON_JOBS = (process.env.BENCH_REDIS_CRON_JOBS ?? '1,100').split(',').filter(Boolean).map(Number);
/** BENCH_REDIS_AOF=0 leaves out the rows of ours with the server's append-only file on. */
const REDIS_AOF = process.env.BENCH_REDIS_AOF !== '0';

/**
 * The redis group: ours on Redis (`gatekeeper-redis`: a PermitRecordStore on a RedisBackend per node, bench/redis-systems.ts)
 * beside redlock, the raw Redis floors and BullMQ, all measured again here on the bench's one Redis server
 * (`--save '' --appendonly no`), emptied first: decisions, cron hold and release at 1, 3 and 6 nodes, tasks
 * (bench/redis-tasks.ts), and ours once more with the append-only file on. Its rows carry `group: 'redis'`.
 * `given`: the run's Redis, when it has one; else (the group alone, or --no-baselines) one started here.
 */
async function redisGroup(given?: Awaited<ReturnType<typeof startRedis>>): Promise<void> {
  const server = given ?? (await startRedis(true))!;
  const before = procs;
  procs = { ...procs, redis: server.pid };
  const from = rows.length;
  const baselines = !NO_BASELINES;
  try {
    await flushRedis(server.port);
    const url = redisUrlOf(server.port);
    const prefix = `bench-redis-${Date.now()}`;
    const cronNames = REDIS_CRON_JOBS.flatMap((m) => [1, 3, 6].flatMap((n) => ['hold', 'release'].flatMap((mode) => Array.from({ length: m }, (_, i) => `r-${mode}-${n}-${m}-job-${i}`))));
    await prepareRedisPrefix(url, prefix, [HELD_NAME, ...FREE_NAMES, ...WARM_NAMES, ...cronNames], (name) => name.startsWith('r-hold'));
    log('Redis: decision latency (warm client, 1 node): gatekeeper-redis, redlock and the raw floors on one Redis (persistence off)');
    await decisions('gatekeeper-redis', (n) => gatekeeperRedisNode(n, url, prefix, false));
    if (baselines) await decisions('redlock', () => redlockNode(server.port));
    rows.push(...(await redisFloorRows(server.port, DECISIONS, procs, log)));
    if (REDIS_AOF) {
      // The same decisions of ours with the append-only file on (appendfsync everysec), on a prefix of their own.
      await setAppendOnly(server.port, true);
      try {
        const aofPrefix = `${prefix}-aof`;
        await prepareRedisPrefix(url, aofPrefix, [HELD_NAME, ...FREE_NAMES, ...WARM_NAMES], () => false);
        await decisions('gatekeeper-redis+aof', (n) => gatekeeperRedisNode(n, url, aofPrefix, false));
      } finally {
        await setAppendOnly(server.port, false);
      }
    }
    log(`Redis: cron workload (${TICKS} measured ticks of ${TICK_MS} ms after ${WARMUP_TICKS} warm-up ticks)`);
    for (const semaphores of REDIS_CRON_JOBS) {
      for (const nodes of [1, 3, 6]) {
        for (const mode of ['hold', 'release'] as const) {
          const key = `r-${mode}-${nodes}-${semaphores}`;
          await cron('gatekeeper-redis', mode, nodes, semaphores, (n) => gatekeeperRedisNode(n, url, prefix), key);
          if (baselines) await cron('redlock', mode, nodes, semaphores, () => redlockNode(server.port), `${key}-r`);
        }
      }
    }
    log(`Redis: tasks: gatekeeper-redis${baselines ? ' and BullMQ' : ''} on one Redis; throughput (submit to completed, no-op handler) on ${TASK_WORKER_COUNTS.join(', ')} worker processes, whole-system CPU, round trips, latency at a steady rate, burst shares`);
    rows.push(...(await redisTaskRows(server.port, procs, baselines, log)));
    rows.push(...(await redisSubmitRows(server.port, procs, baselines, log)));
  } finally {
    procs = before;
    for (const row of rows.slice(from)) row.group = 'redis';
    if (!given) await server.stop();
  }
}

/** The redis group's rows: decisions, floors and cron (ours against redlock and the floor), then tasks (ours against BullMQ). */
function printRedisTables(): void {
  const group = rows.filter((r) => r.group === 'redis');
  const print = (header: string[], table: string[][]) => {
    if (table.length === 0) return;
    log('');
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
    for (const line of [header, ...table]) log(line.map((cell, i) => cell.padEnd(widths[i])).join('  '));
  };
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const x = (a: number | null | undefined, b: number | null | undefined) => (a == null || !b ? '-' : `${round(a / b, 2)}x`);
  const floor = group.find((r) => r.scenario === 'floor-cas' && r.system === 'redis-raw');
  const redlockOf = (r: BenchRow) => group.find((o) => o.system === 'redlock' && o.scenario === r.scenario && o.nodes === r.nodes && o.semaphores === r.semaphores);
  print(
    ['scenario', 'system', 'nodes', 'sems', 'p50 ms', 'p99 ms', 'RT/decision', 'ops/job tick', 'once %', 'cpu ms/tick/node', 'cpu ms/op cli+redis', 'vs redlock', 'vs floor cas p50/p99'],
    group.filter((r) => !r.scenario.startsWith('redis-tasks')).map((r) => {
      const ours = REDIS_OURS.includes(r.system);
      const base = ours ? redlockOf(r) : undefined;
      const vs = !base ? null : r.storeOpsPerTick !== null ? `${x(r.storeOpsPerTick, base.storeOpsPerTick)} ops, ${x(r.cpuMsPer?.total, base.cpuMsPer?.total)} cpu` : `${x(r.p50Ms, base.p50Ms)} p50, ${x(r.p99Ms, base.p99Ms)} p99`;
      const vsFloorCas = r.scenario.startsWith('decision-') && floor ? `${x(r.p50Ms, floor.p50Ms)}/${x(r.p99Ms, floor.p99Ms)}` : null;
      return [r.scenario, r.system, r.nodes, r.semaphores, r.p50Ms, r.p99Ms, r.roundTripsPerDecision, r.storeOpsPerTick, r.exactlyOncePct, r.cpuMsPerTickPerNode, cpuCell(r), vs, vsFloorCas].map(cell);
    }),
  );
  const bullmqOf = (r: BenchRow) => group.find((o) => o.system === 'bullmq' && o.scenario === r.scenario && o.nodes === r.nodes);
  print(
    ['scenario', 'system', 'nodes', 'tasks', 'tasks/s', 'p50 ms', 'p99 ms', 'RT/task', 'redis cmds/task', 'cpu ms/task workers+redis=total', 'bench cpu ms', 'per node', 'max share %', 'vs bullmq'],
    group.filter((r) => r.scenario.startsWith('redis-tasks')).map((r) => {
      const base = r.system !== 'bullmq' ? bullmqOf(r) : undefined;
      const vs = !base ? null : r.scenario === 'redis-tasks-latency' ? `${x(r.p50Ms, base.p50Ms)} p50` : `${x(r.tasksPerSec, base.tasksPerSec)} tasks/s, ${x(r.cpuMsPer?.total, base.cpuMsPer?.total)} cpu`;
      return [r.scenario, r.system, r.nodes, r.runs, r.tasksPerSec, r.p50Ms, r.p99Ms, r.roundTripsPerTask, r.redisCommandsPerTask,
        r.cpuMsPer ? `${r.cpuMsPer.clients}+${r.cpuMsPer.store}=${r.cpuMsPer.total}` : null, r.processCpuMs?.bench, r.shares?.join('/'), r.maxSharePct, vs].map(cell);
    }),
  );
}

async function main(): Promise<void> {
  const started = Date.now();
  const needsMember = GROUPS.some((group) => runs(group) && !POSTGRES_GROUPS.includes(group) && group !== 'redis');
  if (needsMember) await memberGroups();
  else {
    if (runs('postgres')) await postgresBench();
    if (runs('tasks-postgres')) await pgTasksBench();
    if (runs('redis')) await redisGroup();
  }
  if (runs('fencing')) rows.push(...(await fencedWriteRows(log)));
  report(started);
}

/** Sizes of the idle-cluster rows. */
const IDLE_SIZES = (process.env.BENCH_IDLE_SIZES ?? '3,12').split(',').map(Number);

/**
 * The idle-cluster rows on every backend: the bench's member, a PostgreSQL server and a Redis of the bench's own
 * (the run's, when it has one), each in turn, so one backend's nodes never share the cores with another's.
 */
async function idleGroup(cluster: { clusterName: string; addresses: readonly string[] }, given?: Awaited<ReturnType<typeof startRedis>>): Promise<void> {
  log(`idle cluster: store calls per node per second with every capability on and nothing to do, at ${IDLE_SIZES.join(' and ')} node processes`);
  rows.push(...(await idleRows(hazelcastIdleTarget(cluster), IDLE_SIZES, log)));
  const postgres = await startBenchPostgres();
  try {
    rows.push(...(await idleRows(postgresIdleTarget(postgres.url), IDLE_SIZES, log)));
  } finally {
    await postgres.stop();
  }
  const redis = given ?? (await startRedis(true))!;
  try {
    rows.push(...(await idleRows(redisIdleTarget(redisUrlOf(redis.port)), IDLE_SIZES, log)));
  } finally {
    if (!given) await redis.stop();
  }
}

/** Every group that needs the Hazelcast member (and the PostgreSQL ones too, in a run that has any of those). */
async function memberGroups(): Promise<void> {
  // Tests start members for fast startup (C1 only, serial GC); a benchmark wants the steady state of a real
  // deployment: full JIT and the default collector.
  process.env.GATEKEEPER_HZ_JVM_FLAGS ??= '-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC';
  const redis = runs('decisions') || runs('cron') || runs('tasks') || runs('redis') ? await startRedis() : undefined;
  let member: MemberProcess;
  try {
    member = await startMemberProcess(await freePort(), `bench-${process.pid}`);
  } catch (error) {
    await redis?.stop();
    throw error;
  }
  // The member's JVM is the one java process below this one (the project's script starts it).
  procs = { bench: process.pid, member: descendantsOf(process.pid).filter((pid) => commandOf(pid) === 'java'), ...(redis && { redis: redis.pid }) };
  if (procs.member.length !== 1) log(`member JVM processes found below the bench: ${procs.member.length} (CPU columns count them all)`);
  const config: ClientConfig = { clusterName: member.clusterName, network: { clusterMembers: member.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  // The bench started this member itself: nothing was ever granted on it, so no recovery wait is due.
  const declarer = await Client.newHazelcastClient(config);
  await declareNewStore(new HazelcastBackend({ client: declarer }));
  await declarer.shutdown();
  try {
    const prefix = `bench-${Date.now()}`;
    // Definitions for every key the gatekeeper will use, written once.
    if (runs('decisions') || runs('cron') || runs('cron-history')) {
      const admin = await gatekeeperNode('admin', config, prefix, false);
      const names = [HELD_NAME, ...FREE_NAMES, ...WARM_NAMES, ...(runs('decisions') ? [...FLOOR_NAMES, ...FLOOR_WARM_NAMES] : []),
        ...[1, 100].flatMap((m) => [1, 3, 6].flatMap((n) => ['hold', 'release', 'hold-g', 'hold-h', 'hold-l'].flatMap((mode) => Array.from({ length: m }, (_, i) => `c-${mode}-${n}-${m}-job-${i}`))))];
      const definitions = new SemaphoreAdmin(admin.store, systemClock);
      for (const name of names) await definitions.define(validateDefinition({ name, duration: name.startsWith('c-hold') ? '10s' : '5s' }));
      await admin.close();
    }

    if (runs('decisions')) {
      log('decision latency (warm client, 1 node)');
      await decisions('gatekeeper', (n) => gatekeeperNode(n, config, prefix, false), () => startApp(LISTENING_NODE, 'listening-node', {
        GATEKEEPER_HZ_CLUSTER_NAME: member.clusterName, GATEKEEPER_HZ_MEMBERS: member.addresses.join(','), MAP_PREFIX: prefix,
      }), async (listening) => {
        const row = await listenedFloorRow(config, `${prefix}.semaphores`, FLOOR_NAMES, FLOOR_WARM_NAMES, procs, listening?.child.pid);
        rows.push(row);
        log(`  hazelcast-raw: compare-and-set of a semaphore entry a replica hears, a name per call, p50 ${row.p50Ms} / p99 ${row.p99Ms} ms`);
      });
      await decisions('pessimistic-lock', (n) => pessimisticNode(n, config, `${prefix}.pessimistic`));
      if (redis) await decisions('redlock', () => redlockNode(redis.port));
      log('floors: raw calls on the same member and Redis (warm clients)');
      rows.push(...(await floorRows(config, `${prefix}.floor`, redis?.port, DECISIONS, procs, log)));
    }

    if (runs('cron')) {
      log(`cron workload (${TICKS} measured ticks of ${TICK_MS} ms after ${WARMUP_TICKS} warm-up ticks)`);
      for (const semaphores of [1, 100]) {
        for (const nodes of [1, 3, 6]) {
          for (const mode of ['hold', 'release'] as const) {
            const key = `c-${mode}-${nodes}-${semaphores}`;
            await cron('gatekeeper', mode, nodes, semaphores, (n) => gatekeeperNode(n, config, prefix), key);
            await cron('pessimistic-lock', mode, nodes, semaphores, (n) => pessimisticNode(n, config, `${prefix}.pessimistic`), `${key}-p`);
            if (redis) await cron('redlock', mode, nodes, semaphores, () => redlockNode(redis.port), `${key}-r`);
          }
        }
      }
    }

    if (runs('cron-history')) {
      // The run history's cost on a held tick: hold mode with and without every run recorded, in the same run.
      log(`run history on held ticks (${HISTORY_TICKS} measured ticks of ${TICK_MS} ms; history written every 10 s, skipped ticks every 60 s)`);
      for (const semaphores of [1, 100]) {
        for (const nodes of [1, 3, 6]) {
          await cron('gatekeeper', 'hold', nodes, semaphores, (n) => gatekeeperNode(n, config, prefix), `c-hold-g-${nodes}-${semaphores}`, HISTORY_TICKS);
          // The same, each job's instants judged by the slot ledger in its history's writes (issue 66's cost row), run
          // before the history's own row (then after it, in the bench's next group): each pays the other's leftovers.
          await cron('gatekeeper+ledger', 'hold', nodes, semaphores, (n) => gatekeeperHistoryNode(n, config, prefix, true), `c-hold-l-${nodes}-${semaphores}`, HISTORY_TICKS);
          await cron('gatekeeper+history', 'hold', nodes, semaphores, (n) => gatekeeperHistoryNode(n, config, prefix), `c-hold-h-${nodes}-${semaphores}`, HISTORY_TICKS);
        }
      }
    }

    if (runs('schedules')) {
      log('schedules: 1,000 runtime schedules on 3 nodes, and run now');
      rows.push(...(await schedulesBench(config, `${prefix}-schedules`, log)));
    }

    if (runs('overhead')) {
      log('decorator overhead (a tick of a job this node holds)');
      await decoratorOverhead(config, `${prefix}-overhead`);
      log('@LeaderOnly overhead (a call on the leader; run history off and on)');
      await leaderOverhead(config, `${prefix}-leader-overhead`);
    }

    const cluster = { clusterName: member.clusterName, addresses: member.addresses };
    if (runs('leader-failover')) {
      log('leader election: failover after SIGKILL and handover after SIGTERM of the leader (3 node processes)');
      rows.push(...(await leaderFailover(cluster, `${prefix}-leader`, log)));
    }
    if (runs('leader-steady')) {
      log('leader election: steady-state store operations of the whole cluster (node processes, module defaults)');
      rows.push(...(await leaderSteady(cluster, `${prefix}-leader`, log)));
    }
    if (runs('allocation-moves')) {
      log('allocation: a join (3 -> 4) and a SIGKILL (4 -> 3) with 100 and 1000 resources (node processes), and the dalloc-style baseline');
      rows.push(...(await allocationMoves(cluster, `${prefix}-allocation`, log)));
    }
    if (runs('allocation-steady')) {
      log('allocation: steady-state store operations of the whole cluster (3 node processes, module defaults)');
      rows.push(...(await allocationSteady(cluster, `${prefix}-allocation`, log)));
    }
    if (runs('postgres')) await postgresBench();
    if (runs('tasks-postgres')) await pgTasksBench();
    if (runs('tasks')) {
      log(`tasks: throughput (submit to completed, no-op handler) and latency (submit to start) on ${TASK_WORKER_COUNTS.join(', ')} worker processes, round trips, idle cost, dead-worker detection; BullMQ baseline`);
      rows.push(...(await taskRows(cluster, `${prefix}-tasks`, redis?.port, procs, log)));
    }
    if (runs('idle')) await idleGroup(cluster, redis);
    // Last: it empties the bench's Redis first.
    if (runs('redis')) await redisGroup(redis);
  } finally {
    await redis?.stop();
    await member.stop();
  }
}

/** The commit the bench runs on, with `+` when the tree has changes (null outside a git checkout). */
function commitOf(): string | null {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: __dirname, encoding: 'utf8' });
  if (head.status !== 0) return null;
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: __dirname, encoding: 'utf8' });
  return `${head.stdout.trim()}${dirty.stdout.trim() ? '+' : ''}`;
}

/** Prints the tables and writes the JSON. */
function report(started: number): void {
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, durationS: Math.round((Date.now() - started) / 1000),
    startedAt: new Date(started).toISOString(), commit: commitOf(),
  };
  const json = JSON.stringify({ machine, rows }, null, 2);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  let where: string;
  if (only.length === 0 && !NO_BASELINES) {
    const dir = join(__dirname, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'latest.json'), json);
    writeFileSync(join(dir, `${stamp}.json`), json);
    where = 'bench/results/latest.json';
    // The page's tables come from this file; a table the run cannot fill is reported, the results stay written.
    try {
      log(`docs/benchmarks.md: ${writeDocTables().length} tables written from ${where}`);
    } catch (error) {
      log(`docs/benchmarks.md not written: ${(error as Error).message}`);
    }
  } else {
    where = join(tmpdir(), `gatekeeper-bench-${only.join('-') || 'all'}${NO_BASELINES ? '-no-baselines' : ''}-${stamp}.json`);
    writeFileSync(where, json);
  }
  log('');
  printTable();
  printLeaderTable();
  printAllocationTable();
  printTaskTable();
  printPgTaskTable();
  printRedisTables();
  log(`\nmachine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.durationS} s; results in ${where}`);
}

main().then(() => process.exit(0), (error) => {
  console.error(error instanceof BenchSetupError ? `npm run bench: ${error.message}` : error);
  process.exit(1);
});
