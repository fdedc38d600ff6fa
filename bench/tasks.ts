/*
 * The tasks rows of npm run bench (issue 12): end-to-end throughput (submit to completed, a no-op handler) on 1 and
 * 3 worker processes, latency from submit to handler start at a steady rate, store round trips per task, the idle
 * cost per node, and how long a SIGKILLed worker's task waits before another node starts it. Every worker is a real
 * process (bench/task-node.ts); the bench process submits, through the library's own submit (gatekeeper) or
 * `Queue.add` with a job id (BullMQ, the baseline, on the bench's Redis, with the same workload and concurrency).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile, round, type BenchRow, TASK_WORKER_COUNTS } from './bench-stats';
import { heapKBPer, heapNow } from './heap-allocations';
import { cpuWindow, type WindowCpu } from './proc-cpu';
import { allSeen, preciseNow, startNodes, stopNodes, waitFor, type WorkerNode } from './worker-node';
import { backlogRows } from './task-backlog';
import { taskFloorRow } from './task-floor';
import { clientConfigOf, DETECTION_SETTINGS, openSubmitter, submitAll, workerEnv, type BenchProcesses, type Cluster, type Submitter, type System } from './task-submitters';
/**
 * The throughput rows' tasks. At 2,000 a warm BullMQ finished in 0.13 to 0.27 s, a window short enough for one
 * scheduling hiccup on two shared cores to move its row by half between runs.
 */
const THROUGHPUT_TASKS = Number(process.env.BENCH_TASKS ?? 10_000);
/** The burst row: this many tasks on 3 nodes, each node's share reported (the target: none above 40 %). */
const BURST_TASKS = Number(process.env.BENCH_BURST_TASKS ?? 3000);
/**
 * Tasks each set of worker processes runs, unmeasured, before the throughput burst, for every system alike (and
 * the raw lifecycle floor): fresh processes and a member whose task paths never ran otherwise spend much of the
 * burst compiling code, which measures start-up, not throughput (the member's JIT threads used about as much CPU as
 * its operation threads). 2,000 was too few: with 10,000, gatekeeper's 1-node row rose by half (2,815-3,021 to
 * 4,535-4,603 tasks/s) and BullMQ's by 11-97 %.
 */
const WARMUP_TASKS = Number(process.env.BENCH_TASK_WARMUP ?? 10_000);
const LATENCY_TASKS = 200;
const LATENCY_RATE_PER_S = 20;
const IDLE_WINDOW_MS = 10_000;

const timeOf = (nodes: WorkerNode[], kind: 'started' | 'completed', id: string) => nodes.find((n) => n[kind].has(id))![kind].get(id)!;
const nodeOps = async (nodes: WorkerNode[]) => (await Promise.all(nodes.filter((n) => !n.exited()).map((n) => n.operations()))).reduce((a, b) => a + b, 0);

/** CPU per task over a window: the worker processes plus the system's store (member or Redis) is the whole system; the bench process (submitter and harness) is left out of it and reported in `processCpuMs`. */
export function cpuPerTask(system: System, cpu: WindowCpu, tasks: number): BenchRow['cpuMsPer'] {
  const store = system === 'gatekeeper' ? cpu.member : cpu.redis;
  if (cpu.workers === null || store === null) return null;
  return { unit: 'task', clients: round(cpu.workers / tasks, 3)!, store: round(store / tasks, 3)!, total: round((cpu.workers + store) / tasks, 3)! };
}

/** A burst of `names` from the one submitter until every task completed: elapsed s, round trips, CPU, per-task submit-to-start latency and each node's share. */
async function burst(system: System, nodes: WorkerNode[], submitter: Submitter, names: string[], idOf: (name: string) => string, procs: BenchProcesses) {
  const opsBefore = (await submitter.operations()) + (await nodeOps(nodes));
  const heapBefore = heapNow(nodes);
  const cpu = cpuWindow({ ...procs, workers: nodes.map((n) => n.pid) });
  const started = preciseNow();
  const submitted = await submitAll(submitter, 'noop', names, idOf);
  const ids = names.map(idOf);
  await allSeen(nodes, 'completed', ids, `${system}: ${names.length} tasks completed`, 300_000);
  const used = cpu.stop();
  const lastDone = Math.max(...ids.map((id) => timeOf(nodes, 'completed', id)));
  const trips = (await submitter.operations()) + (await nodeOps(nodes)) - opsBefore;
  const heap = heapKBPer('task', heapBefore, heapNow(nodes), names.length);
  const latency = ids.map((id) => timeOf(nodes, 'started', id) - submitted.get(id)!);
  const shares = nodes.map((node) => ids.filter((id) => node.started.has(id)).length);
  return { elapsedS: (lastDone - started) / 1000, trips, cpu: used, heap, latency, shares };
}

/**
 * Throughput, latency, round trips and idle cost of one system on `nodeCount` worker processes, in one set of
 * processes: a burst of THROUGHPUT_TASKS, then LATENCY_TASKS at a steady rate, then an idle window (and, on 3 nodes,
 * a burst of BURST_TASKS for each node's share).
 */
async function measure(system: System, nodeCount: number, env: NodeJS.ProcessEnv, submitter: Submitter, run: string, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow[]> {
  // The module's default scan interval (5 s): new work is signalled, the scan only finds lapsed leases.
  const nodes = await startNodes(system, nodeCount, { ...env, SCAN_MS: '5000' }, `${system}-${nodeCount}`);
  const idOf = (name: string) => (system === 'gatekeeper' ? `noop:${name}` : `noop-${name}`);
  const base = { system, nodes: nodeCount, semaphores: 0, opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null } as const;
  try {
    if (WARMUP_TASKS > 0) await burst(system, nodes, submitter, Array.from({ length: WARMUP_TASKS }, (_, i) => `${run}-w${i}`), idOf, procs);
    const names = Array.from({ length: THROUGHPUT_TASKS }, (_, i) => `${run}-t${i}`);
    const done = await burst(system, nodes, submitter, names, idOf, procs);
    const tasksPerSec = round(THROUGHPUT_TASKS / done.elapsedS, 0);
    const cpuMsPer = cpuPerTask(system, done.cpu, THROUGHPUT_TASKS);
    log(`  ${system} ${nodeCount} node(s): ${THROUGHPUT_TASKS} tasks in ${round(done.elapsedS, 2)} s = ${tasksPerSec}/s, ${round(done.trips / THROUGHPUT_TASKS, 2)} store calls per task, per node ${done.shares.join('/')}, CPU per task ${cpuMsPer ? `${cpuMsPer.clients} ms workers + ${cpuMsPer.store} ms ${system === 'gatekeeper' ? 'member' : 'Redis'}` : 'n/a'} (bench process ${done.cpu.bench} ms); heap per task ${done.heap ? `${done.heap.clients} KB workers, ${done.heap.bench} KB bench process` : 'n/a'}`);

    const steady = Array.from({ length: LATENCY_TASKS }, (_, i) => `${run}-l${i}`);
    const steadyAt = new Map<string, number>();
    for (const name of steady) {
      steadyAt.set(idOf(name), preciseNow());
      await submitter.submit('noop', name);
      await sleep(1000 / LATENCY_RATE_PER_S);
    }
    await allSeen(nodes, 'started', steady.map(idOf), `${system}: the steady tasks started`, 60_000);
    const latency = steady.map((n) => timeOf(nodes, 'started', idOf(n)) - steadyAt.get(idOf(n))!);
    log(`  ${system} ${nodeCount} node(s): submit to start at ${LATENCY_RATE_PER_S}/s p50 ${round(percentile(latency, 50))} ms, p99 ${round(percentile(latency, 99))} ms (in the burst: p50 ${round(percentile(done.latency, 50))} ms)`);

    const idleBefore = (await submitter.operations()) + (await nodeOps(nodes));
    const idleCpu = cpuWindow({ ...procs, workers: nodes.map((n) => n.pid) });
    await sleep(IDLE_WINDOW_MS);
    const idleUsed = idleCpu.stop();
    const idleOps = (await submitter.operations()) + (await nodeOps(nodes)) - idleBefore;
    const idlePerNode = round(idleOps / nodeCount / (IDLE_WINDOW_MS / 1000), 2);
    log(`  ${system} ${nodeCount} node(s): idle ${idlePerNode} store calls per node per second, CPU ${idleUsed.workers} ms workers over ${idleUsed.windowMs} ms`);
    const rows: BenchRow[] = [
      { ...base, scenario: 'tasks-throughput', runs: THROUGHPUT_TASKS, p50Ms: round(percentile(done.latency, 50)), p99Ms: round(percentile(done.latency, 99)), tasksPerSec, roundTripsPerTask: round(done.trips / THROUGHPUT_TASKS, 2), idleOpsPerSecPerNode: idlePerNode, processCpuMs: done.cpu, cpuMsPer, heapKBPer: done.heap, shares: done.shares },
      { ...base, scenario: 'tasks-latency', runs: LATENCY_TASKS, p50Ms: round(percentile(latency, 50)), p99Ms: round(percentile(latency, 99)), tasksPerSec: LATENCY_RATE_PER_S },
    ];
    if (nodeCount === 3) {
      const burstNames = Array.from({ length: BURST_TASKS }, (_, i) => `${run}-b${i}`);
      const b = await burst(system, nodes, submitter, burstNames, idOf, procs);
      const maxSharePct = round((100 * Math.max(...b.shares)) / BURST_TASKS, 1);
      log(`  ${system} burst of ${BURST_TASKS} on 3 nodes: per node ${b.shares.join('/')} (largest share ${maxSharePct} %), ${round(BURST_TASKS / b.elapsedS, 0)}/s`);
      rows.push({ ...base, scenario: 'tasks-burst', runs: BURST_TASKS, p50Ms: round(percentile(b.latency, 50)), p99Ms: round(percentile(b.latency, 99)), tasksPerSec: round(BURST_TASKS / b.elapsedS, 0), roundTripsPerTask: round(b.trips / BURST_TASKS, 2), processCpuMs: b.cpu, cpuMsPer: cpuPerTask(system, b.cpu, BURST_TASKS), heapKBPer: b.heap, shares: b.shares, maxSharePct });
    }
    return rows;
  } finally {
    await stopNodes(nodes);
  }
}

/** A task whose worker is SIGKILLed while it runs it: ms until another node starts it. */
async function detection(system: System, env: NodeJS.ProcessEnv, submitter: Submitter, run: string, log: (line: string) => void): Promise<BenchRow> {
  const nodes = await startNodes(system, 2, env, `${system}-detect`);
  try {
    const name = `${run}-hang`;
    const id = system === 'gatekeeper' ? `hang:${name}` : `hang-${name}`;
    await submitter.submit('hang', name);
    const holder = await waitFor(nodes, `${system}: the hang task started`, () => nodes.find((n) => n.started.has(id)), 30_000);
    holder.child.kill('SIGKILL');
    const killedAt = preciseNow();
    const other = nodes.find((n) => n !== holder)!;
    await waitFor([other], `${system}: the task started elsewhere`, () => other.started.has(id), 120_000);
    const detectionMs = Math.round(other.started.get(id)! - killedAt);
    const bound = system === 'gatekeeper' ? ` (bound lease ${DETECTION_SETTINGS.leaseMs} + skew 500 + scan ${DETECTION_SETTINGS.scanMs})` : ' (defaults: 30 s lock, 30 s stalled check)';
    log(`  ${system}: a SIGKILLed worker's task started elsewhere ${detectionMs} ms after the kill${bound}`);
    return {
      scenario: 'tasks-detection', system, nodes: 2, semaphores: 0, runs: 1, p50Ms: null, p99Ms: null, opsPerSec: null, storeOpsPerTick: null,
      roundTripsPerDecision: null, exactlyOncePct: null, detectionMs,
      ...(system === 'gatekeeper' && { taskSettings: { ...DETECTION_SETTINGS, maxClockSkewMs: 500 } }),
    };
  } finally {
    await stopNodes(nodes);
  }
}

/** Every tasks row, both systems (BullMQ only with a Redis). */
export async function taskRows(cluster: Cluster, mapPrefix: string, redisPort: number | undefined, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow[]> {
  const env = workerEnv(cluster, mapPrefix, redisPort);
  const rows: BenchRow[] = [await taskFloorRow(clientConfigOf(cluster), `${mapPrefix}-floor`, THROUGHPUT_TASKS, WARMUP_TASKS, procs, log)];
  const systems: System[] = redisPort === undefined ? ['gatekeeper'] : ['gatekeeper', 'bullmq'];
  if (redisPort === undefined) log('  no Redis (--no-baselines): the BullMQ baseline is left out');
  for (const system of systems) {
    const submitter = await openSubmitter(system, cluster, mapPrefix, redisPort);
    try {
      for (const nodes of TASK_WORKER_COUNTS) rows.push(...(await measure(system, nodes, env, submitter, `${system}-${nodes}-${Date.now()}`, procs, log)));
      rows.push(await detection(system, env, submitter, `${system}-${Date.now()}`, log));
    } finally {
      await submitter.close();
    }
  }
  for (const system of systems) rows.push(...(await backlogRows(system, cluster, `${mapPrefix}-backlog`, redisPort, procs, log)));
  return rows;
}
