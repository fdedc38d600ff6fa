/*
 * The tasks-backlog rows of npm run bench: what a claim costs when many tasks wait, against a near-empty queue.
 * A worker process with one slot starts on a queue of `backlog` pending no-op tasks plus MEASURED more (submitted
 * before it starts, through the same submit as the other rows), takes one task to warm up, then MEASURED in a row.
 * Its claim latency is the slot's cycle, from one handler start to the next (the no-op returns, the worker finishes
 * it, claims, starts the next), from the fractional-ms times the worker prints; the gap from a completion to the
 * next start is kept beside it. Bytes per claim
 * is what the worker process read over the window, from /proc/<pid>/io `rchar` (every read of its sockets, so
 * scans, events and claim answers alike, with no client internals involved), divided by the claims: a claim that
 * transfers the backlog shows here as it grows. The same for BullMQ on its own queue.
 */
import { percentile, round, type BenchRow } from './bench-stats';
import { bytesReadOf, cpuWindow } from './proc-cpu';
import { openSubmitter, submitAll, workerEnv, type BenchProcesses } from './task-submitters';
import { startNodes, stopNodes, waitFor } from './worker-node';

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 100_000);
const MEASURED = 500;
/** Submits in flight while filling the backlog (not measured). */
const LOAD_IN_FLIGHT = 64;

type Cluster = { clusterName: string; addresses: string[] };

async function backlogRow(system: 'gatekeeper' | 'bullmq', backlog: number, cluster: Cluster, mapPrefix: string, redisPort: number | undefined, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow> {
  const prefix = `${mapPrefix}-${backlog}`;
  const queue = `backlog-${backlog}`;
  const submitter = await openSubmitter(system, cluster, prefix, redisPort, queue);
  try {
    const names = Array.from({ length: backlog + MEASURED + 1 }, (_, i) => `bk${i}`);
    const idOf = (name: string) => (system === 'gatekeeper' ? `noop:${name}` : `noop-${name}`);
    const loadStart = Date.now();
    await submitAll(submitter, 'noop', names, idOf, LOAD_IN_FLIGHT);
    log(`  ${system}: ${names.length} tasks pending (loaded in ${round((Date.now() - loadStart) / 1000, 1)} s), starting one worker with one slot`);
    const [node] = await startNodes(system, 1, { ...workerEnv(cluster, prefix, redisPort), CONCURRENCY: '1', SCAN_MS: '5000', QUEUE: queue }, `${system}-backlog-${backlog}`);
    try {
      await waitFor([node], `${system}: the first backlog task completed`, () => node.completed.size >= 1, 300_000);
      const cpu = cpuWindow({ ...procs, workers: [node.pid] });
      const readBefore = bytesReadOf(node.pid);
      await waitFor([node], `${system}: ${MEASURED} backlog tasks completed`, () => node.completed.size >= 1 + MEASURED, 300_000);
      const readAfter = bytesReadOf(node.pid);
      const used = cpu.stop();
      // One slot: starts and completions alternate, in the order the worker printed them.
      const starts = [...node.started.values()];
      const completions = [...node.completed.values()];
      // The cycle of the slot (one start to the next: finish, claim, start) holds every cost of a claim, work the
      // worker does between a start and its completion line included; the gap (completion to next start) is the
      // claim as the handler sees it, which a worker that claims ahead keeps short while its batch lasts.
      const cycles = Array.from({ length: MEASURED }, (_, k) => starts[k + 1] - starts[k]);
      const gaps = Array.from({ length: MEASURED }, (_, k) => starts[k + 1] - completions[k]);
      const bytesPerClaim = readBefore === undefined || readAfter === undefined ? null : Math.round((readAfter - readBefore) / MEASURED);
      const store = system === 'gatekeeper' ? used.member : used.redis;
      log(`  ${system} with ${backlog} more pending: slot cycle p50 ${round(percentile(cycles, 50))} ms, p99 ${round(percentile(cycles, 99))} ms, max ${round(Math.max(...cycles))} ms (completion to next start p50 ${round(percentile(gaps, 50))} ms, p99 ${round(percentile(gaps, 99))} ms), ${bytesPerClaim} bytes read per claim, ${round(MEASURED / (used.windowMs / 1000), 0)} claims/s`);
      return {
        scenario: 'tasks-backlog', system, nodes: 1, semaphores: 0, runs: MEASURED, p50Ms: round(percentile(cycles, 50)), p99Ms: round(percentile(cycles, 99)),
        maxMs: round(Math.max(...cycles)),
        claimGapMs: { p50: round(percentile(gaps, 50))!, p99: round(percentile(gaps, 99))! },
        opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
        tasksPerSec: round(MEASURED / (used.windowMs / 1000), 0), backlog, bytesPerClaim, processCpuMs: used,
        cpuMsPer: used.workers === null || store === null ? null : { unit: 'claim', clients: round(used.workers / MEASURED, 3)!, store: round(store / MEASURED, 3)!, total: round((used.workers + store) / MEASURED, 3)! },
      };
    } finally {
      await stopNodes([node]);
    }
  } finally {
    await submitter.close();
  }
}

/** The near-empty and the full backlog rows of one system. */
export async function backlogRows(system: 'gatekeeper' | 'bullmq', cluster: Cluster, mapPrefix: string, redisPort: number | undefined, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const backlog of [0, BACKLOG]) rows.push(await backlogRow(system, backlog, cluster, mapPrefix, redisPort, procs, log));
  return rows;
}
