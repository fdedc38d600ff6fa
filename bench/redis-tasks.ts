/*
 * The tasks rows of the `redis` group of npm run bench: ours on Redis (`gatekeeper-redis`: worker processes are Nest
 * apps with `GatekeeperModule.forRoot({ backend: 'redis', redis: { url, mapPrefix } })`, bench/task-node.ts with
 * GATEKEEPER_BACKEND=redis) against BullMQ on the same Redis server with the same workload as the Hazelcast tasks
 * rows (bench/tasks.ts): a no-op handler, 4 tasks at once per worker process, one submitter in the bench process with
 * 16 submits in flight (ours: `TaskWorker.submit` on a RedisTaskStore; BullMQ: `Queue.add` with a job id).
 *   - redis-tasks-throughput: BENCH_REDIS_TASKS (10,000) tasks from the first submit to the last completion, on 1 and
 *     3 worker processes, after an unmeasured warm-up burst of BENCH_REDIS_TASK_WARMUP (10,000) on the same processes;
 *     p50/p99: submit to start within the burst (queueing included);
 *   - CPU per task of the whole system over that window: the worker processes plus redis-server (the bench process,
 *     submitter and harness, reported apart in processCpuMs.bench);
 *   - round trips per task: ours, the stores' operationCount() (workers and submitter); BullMQ, Redis commands sent;
 *     and Redis commands sent for both alike (redisCommandsPerTask: every ioredis command of the workers and of the
 *     submitter, a Lua script counting as one, ours' subscriber checks included);
 *   - redis-tasks-latency: 200 tasks at a steady 20/s, submit to handler start, on the same processes;
 *   - redis-tasks-burst: on 3 nodes, BENCH_BURST_TASKS (3,000) more in one burst, each node's share.
 * BENCH_REDIS_DELAY_MS (diagnostics) runs them all through a proxy that delays each way (bench/delay-proxy.ts).
 * Every row starts from an empty Redis (FLUSHALL; ours then declares its fresh prefix new before its workers start)
 * with a fresh submitter and fresh worker processes; node counts are interleaved across systems. One more row of ours
 * runs on 1 node with the server's append-only file on (`gatekeeper-redis+aof`, appendfsync everysec).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisBackend } from '../lib/backends/redis/redis-backend';
import { delayProxy } from './delay-proxy';
import { percentile, round, type BenchRow, TASK_WORKER_COUNTS } from './bench-stats';
import { heapKBPer, heapNow } from './heap-allocations';
import { cpuWindow } from './proc-cpu';
import { countBenchRedisCommands, flushRedis, redisInfo as withRedisInfo, redisUrlOf, setAppendOnly } from './redis-systems';
import { gatekeeperRedisSubmitter, openSubmitter, submitAll, type BenchProcesses, type Submitter } from './task-submitters';
import { allSeen, preciseNow, startNodes, stopNodes, type WorkerNode } from './worker-node';

const TASKS = Number(process.env.BENCH_REDIS_TASKS ?? process.env.BENCH_TASKS ?? 10_000);
const WARMUP = Number(process.env.BENCH_REDIS_TASK_WARMUP ?? process.env.BENCH_TASK_WARMUP ?? 10_000);
const BURST_TASKS = Number(process.env.BENCH_BURST_TASKS ?? 3000);
const LATENCY_TASKS = 200;
const LATENCY_RATE_PER_S = 20;
/** BENCH_REDIS_AOF=0 leaves out the row of ours with the append-only file on. */
const WITH_AOF = process.env.BENCH_REDIS_AOF !== '0';
/**
 * BENCH_REDIS_DELAY_MS (diagnostics only, not in the committed results): every client reaches Redis through a proxy
 * that holds each chunk this long each way (about 1 ms at least: Node's timers), as a Redis across a network would.
 */
const DELAY_MS = Number(process.env.BENCH_REDIS_DELAY_MS ?? 0);
/** Tasks at once per worker process: 4, as every other tasks row (BENCH_REDIS_CONCURRENCY: diagnostics only). */
const CONCURRENCY = process.env.BENCH_REDIS_CONCURRENCY ?? '4';

type RedisTaskSystem = 'gatekeeper-redis' | 'gatekeeper-redis+aof' | 'bullmq';

const isOurs = (system: RedisTaskSystem) => system !== 'bullmq';
const idOf = (system: RedisTaskSystem, name: string) => (isOurs(system) ? `noop:${name}` : `noop-${name}`);
const timeOf = (nodes: WorkerNode[], kind: 'started' | 'completed', id: string) => nodes.find((n) => n[kind].has(id))![kind].get(id)!;

/** This process's Redis commands (the submitter's), counted while the group runs. */
let benchCommands: { readonly sent: number } = { sent: 0 };

/** Round trips (ours: store calls; BullMQ: commands) and Redis commands so far, every node's and the submitter's. */
async function counts(system: RedisTaskSystem, submitter: Submitter, nodes: WorkerNode[]): Promise<{ trips: number; commands: number }> {
  let trips = await submitter.operations();
  let commands = benchCommands.sent;
  for (const node of nodes) {
    const ops = await node.operations();
    trips += ops;
    // Ours prints its commands beside its store calls; BullMQ's round trips are its commands.
    commands += isOurs(system) ? node.lastQueries() : ops;
  }
  return { trips, commands };
}

/** A burst of `names` until every task completed: elapsed s, round trips, commands, CPU, submit-to-start latency and each node's share. */
async function burst(system: RedisTaskSystem, nodes: WorkerNode[], submitter: Submitter, names: string[], procs: BenchProcesses) {
  const before = await counts(system, submitter, nodes);
  const heapBefore = heapNow(nodes);
  const cpu = cpuWindow({ ...procs, workers: nodes.map((n) => n.pid) });
  const started = preciseNow();
  const submitted = await submitAll(submitter, 'noop', names, (name) => idOf(system, name));
  const ids = names.map((name) => idOf(system, name));
  await allSeen(nodes, 'completed', ids, `${system}: ${names.length} tasks completed`, 300_000);
  const used = cpu.stop();
  const lastDone = Math.max(...ids.map((id) => timeOf(nodes, 'completed', id)));
  const after = await counts(system, submitter, nodes);
  const heap = heapKBPer('task', heapBefore, heapNow(nodes), names.length);
  const latency = ids.map((id) => timeOf(nodes, 'started', id) - submitted.get(id)!);
  const shares = nodes.map((node) => ids.filter((id) => node.started.has(id)).length);
  return { elapsedS: (lastDone - started) / 1000, trips: after.trips - before.trips, commands: after.commands - before.commands, cpu: used, heap, latency, shares };
}

/** Redis's own count of calls and µs spent in each command so far (INFO commandstats). */
async function commandStats(port: number): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await withRedisInfo(port);
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const match of info.matchAll(/^cmdstat_(\S+):calls=(\d+),usec=(\d+)/gm)) stats.set(match[1], { calls: Number(match[2]), usec: Number(match[3]) });
  return stats;
}

/** The commands that took the most of Redis's time between two readings: `name calls/task µs/task (µs/call)`. */
function describeStats(before: Map<string, { calls: number; usec: number }>, after: Map<string, { calls: number; usec: number }>, tasks: number): string {
  const deltas = [...after].map(([name, a]) => ({ name, calls: a.calls - (before.get(name)?.calls ?? 0), usec: a.usec - (before.get(name)?.usec ?? 0) })).filter((d) => d.calls > 0);
  const total = deltas.reduce((sum, d) => sum + d.usec, 0);
  return `${round(total / tasks, 1)} µs in all; ` + deltas.sort((a, b) => b.usec - a.usec).slice(0, 4)
    .map((d) => `${d.name} ${round(d.calls / tasks, 2)} calls ${round(d.usec / tasks, 1)} µs (${round(d.usec / d.calls, 1)} µs/call)`).join(', ');
}

/** CPU per task: the worker processes plus redis-server (the bench process left out). */
function cpuPerTask(cpu: ReturnType<ReturnType<typeof cpuWindow>['stop']>, tasks: number): BenchRow['cpuMsPer'] {
  if (cpu.workers === null || cpu.redis === null) return null;
  return { unit: 'task', clients: round(cpu.workers / tasks, 3)!, store: round(cpu.redis / tasks, 3)!, total: round((cpu.workers + cpu.redis) / tasks, 3)! };
}

/** One system's rows on `nodeCount` fresh worker processes, from an empty Redis. */
async function measure(system: RedisTaskSystem, nodeCount: number, port: number, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow[]> {
  await flushRedis(port);
  const url = redisUrlOf(port);
  const stamp = Date.now();
  const mapPrefix = `bench-tasks-${stamp}`;
  const queue = `bench-redis-${stamp}`;
  // The prefix is new: declared so before any node uses it, or its first use counts as a loss and permits wait.
  if (isOurs(system) && !(await new RedisBackend({ url, mapPrefix }).declareFresh())) throw new Error(`redis tasks: the prefix ${mapPrefix} was in use already`);
  const submitter = isOurs(system) ? await gatekeeperRedisSubmitter(url, mapPrefix) : await openSubmitter('bullmq', { clusterName: '', addresses: [] }, mapPrefix, port, queue);
  const base = { system, nodes: nodeCount, semaphores: 0, opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null, group: 'redis' } as const;
  try {
    const env: NodeJS.ProcessEnv = {
      // As the other tasks rows: 4 at once per process, the module's default scan interval (5 s).
      CONCURRENCY, SCAN_MS: '5000', HANG_LEASE_MS: '5000', MAP_PREFIX: mapPrefix, REDIS_PORT: String(port), QUEUE: queue,
      ...(isOurs(system) && { GATEKEEPER_BACKEND: 'redis', GATEKEEPER_REDIS_URL: url }),
    };
    const nodes = await startNodes(isOurs(system) ? 'gatekeeper' : 'bullmq', nodeCount, env, `${system}-${nodeCount}`);
    try {
      const run = `${system}-${nodeCount}-${stamp}`;
      if (WARMUP > 0) await burst(system, nodes, submitter, Array.from({ length: WARMUP }, (_, i) => `${run}-w${i}`), procs);
      const statsBefore = await commandStats(port);
      const done = await burst(system, nodes, submitter, Array.from({ length: TASKS }, (_, i) => `${run}-t${i}`), procs);
      const statsAfter = await commandStats(port);
      const tasksPerSec = round(TASKS / done.elapsedS, 0);
      const cpuMsPer = cpuPerTask(done.cpu, TASKS);
      const roundTripsPerTask = round(done.trips / TASKS, 2);
      const redisCommandsPerTask = round(done.commands / TASKS, 2);
      log(`  ${system} ${nodeCount} node(s): ${TASKS} tasks in ${round(done.elapsedS, 2)} s = ${tasksPerSec}/s, ${roundTripsPerTask} round trips (${redisCommandsPerTask} Redis commands) per task, `
        + `per node ${done.shares.join('/')}, CPU per task ${cpuMsPer ? `${cpuMsPer.clients} ms workers + ${cpuMsPer.store} ms Redis = ${cpuMsPer.total} ms` : 'n/a'} (bench process ${done.cpu.bench} ms); heap per task ${done.heap ? `${done.heap.clients} KB workers, ${done.heap.bench} KB bench process` : 'n/a'}; `
        + `Redis's own time by command (INFO commandstats), per task: ${describeStats(statsBefore, statsAfter, TASKS)}`);
      const rows: BenchRow[] = [{
        ...base, scenario: 'redis-tasks-throughput', runs: TASKS, p50Ms: round(percentile(done.latency, 50)), p99Ms: round(percentile(done.latency, 99)),
        tasksPerSec, roundTripsPerTask, redisCommandsPerTask, processCpuMs: done.cpu, cpuMsPer, heapKBPer: done.heap, shares: done.shares,
      }];

      const steady = Array.from({ length: LATENCY_TASKS }, (_, i) => `${run}-l${i}`);
      const at = new Map<string, number>();
      for (const name of steady) {
        at.set(name, preciseNow());
        await submitter.submit('noop', name);
        await sleep(1000 / LATENCY_RATE_PER_S);
      }
      await allSeen(nodes, 'started', steady.map((name) => idOf(system, name)), `${system}: the steady tasks started`, 60_000);
      const latency = steady.map((name) => timeOf(nodes, 'started', idOf(system, name)) - at.get(name)!);
      log(`  ${system} ${nodeCount} node(s): submit to start at ${LATENCY_RATE_PER_S}/s p50 ${round(percentile(latency, 50))} ms, p99 ${round(percentile(latency, 99))} ms (in the burst: p50 ${round(percentile(done.latency, 50))} ms)`);
      rows.push({ ...base, scenario: 'redis-tasks-latency', runs: LATENCY_TASKS, p50Ms: round(percentile(latency, 50)), p99Ms: round(percentile(latency, 99)), tasksPerSec: LATENCY_RATE_PER_S });

      if (nodeCount === 3) {
        const b = await burst(system, nodes, submitter, Array.from({ length: BURST_TASKS }, (_, i) => `${run}-b${i}`), procs);
        const maxSharePct = round((100 * Math.max(...b.shares)) / BURST_TASKS, 1);
        log(`  ${system} burst of ${BURST_TASKS} on 3 nodes: per node ${b.shares.join('/')} (largest share ${maxSharePct} %), ${round(BURST_TASKS / b.elapsedS, 0)}/s`);
        rows.push({
          ...base, scenario: 'redis-tasks-burst', runs: BURST_TASKS, p50Ms: round(percentile(b.latency, 50)), p99Ms: round(percentile(b.latency, 99)), tasksPerSec: round(BURST_TASKS / b.elapsedS, 0),
          roundTripsPerTask: round(b.trips / BURST_TASKS, 2), redisCommandsPerTask: round(b.commands / BURST_TASKS, 2), processCpuMs: b.cpu, cpuMsPer: cpuPerTask(b.cpu, BURST_TASKS), heapKBPer: b.heap, shares: b.shares, maxSharePct,
        });
      }
      return rows;
    } finally {
      await stopNodes(nodes);
    }
  } finally {
    await submitter.close();
  }
}

/**
 * Every tasks row of the redis group on the bench's Redis at `port` (`procs.redis`: its pid, the store of the CPU
 * columns). `baselines`: BullMQ beside ours (false with --no-baselines).
 */
export async function redisTaskRows(server: number, procs: BenchProcesses, baselines: boolean, log: (line: string) => void): Promise<BenchRow[]> {
  const counter = countBenchRedisCommands();
  benchCommands = counter;
  const rows: BenchRow[] = [];
  // Diagnostics only: every client of these rows reaches Redis through a proxy that delays each way.
  const proxy = DELAY_MS > 0 ? await delayProxy(server, DELAY_MS) : undefined;
  if (proxy) log(`  (BENCH_REDIS_DELAY_MS=${DELAY_MS}: every connection of these rows is delayed about ${Math.max(1, DELAY_MS)} ms each way)`);
  const port = proxy?.port ?? server;
  try {
    const systems: RedisTaskSystem[] = baselines ? ['gatekeeper-redis', 'bullmq'] : ['gatekeeper-redis'];
    // Each node count in turn for every system, so a slow spell of the shared machine is less likely to hit one system only.
    for (const nodes of TASK_WORKER_COUNTS) for (const system of systems) rows.push(...(await measure(system, nodes, port, procs, log)));
    if (WITH_AOF) {
      await setAppendOnly(port, true);
      try {
        rows.push(...(await measure('gatekeeper-redis+aof', 1, port, procs, log)));
      } finally {
        await setAppendOnly(port, false);
      }
    }
  } finally {
    counter.stop();
    benchCommands = { sent: 0 };
    await proxy?.close();
  }
  return rows;
}
