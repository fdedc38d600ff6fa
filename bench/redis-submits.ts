/*
 * The submit rows of the `redis` group of npm run bench: what submitting costs the submitter, with no worker running,
 * ours (`TaskWorker.submit` and `submitMany` on a RedisTaskStore, as `TaskService` calls them) against BullMQ
 * (`Queue.add` and `addBulk`, each with a job id) on the same Redis:
 *   - redis-submit: BENCH_REDIS_SUBMITS (10,000) submits after 2,000 unmeasured ones, 16 in flight;
 *   - redis-submit-bulk: the same tasks in lists of 1,000, one list at a time.
 * CPU per task: the bench process (the submitter alone: no worker and no harness runs meanwhile) and redis-server;
 * KB allocated per task: the bench process's (bench/heap-allocations.ts).
 */
import { Queue } from 'bullmq';
import { systemClock } from '../lib/core/clock';
import { RedisBackend } from '../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../lib/backends/redis/tasks/redis-task.store';
import { TaskWorker } from '../lib/tasks/task-worker';
import { round, type BenchRow } from './bench-stats';
import { heapAllocations } from './heap-allocations';
import { cpuWindow } from './proc-cpu';
import { flushRedis, redisUrlOf } from './redis-systems';
import type { BenchProcesses } from './task-submitters';

const SUBMITS = Number(process.env.BENCH_REDIS_SUBMITS ?? 10_000);
const WARMUP = 2_000;
const IN_FLIGHT = 16;
const LIST = 1_000;

type SubmitSystem = 'gatekeeper-redis' | 'bullmq';

/** A submitter of one system: one submit, or a list at once. */
interface Submits {
  one(name: string): Promise<unknown>;
  list(names: string[]): Promise<unknown>;
  close(): Promise<unknown>;
}

async function submitsOf(system: SubmitSystem, port: number, stamp: string): Promise<Submits> {
  if (system === 'bullmq') {
    const queue = new Queue(`bench-submits-${stamp}`, { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null } });
    const opts = (name: string) => ({ jobId: `noop-${name}`, removeOnComplete: { count: 100_000 } });
    return {
      one: (name) => queue.add('noop', null, opts(name)),
      list: (names) => queue.addBulk(names.map((name) => ({ name: 'noop', data: null, opts: opts(name) }))),
      close: () => queue.close(),
    };
  }
  const backend = new RedisBackend({ url: redisUrlOf(port), mapPrefix: `bench-submits-${stamp}`, onWarning: () => undefined });
  // The prefix is new: declared so before its first use (else that use counts as a loss of the store's data).
  await backend.declareFresh();
  const store = new RedisTaskStore(backend);
  await store.connect();
  const worker = new TaskWorker(store, { instance: 'bench/submitter', acquirer: 'bench' }, { clock: systemClock, clockSkewMs: 500 });
  return {
    one: (name) => worker.submit({ type: 'noop', name }),
    list: (names) => worker.submitMany(names.map((name) => ({ type: 'noop', name }))),
    close: () => store.close(),
  };
}

/** Submits `names` one at a time, IN_FLIGHT at once, or in lists of LIST. */
async function submitAllOf(submits: Submits, names: string[], bulk: boolean): Promise<void> {
  if (bulk) {
    for (let at = 0; at < names.length; at += LIST) await submits.list(names.slice(at, at + LIST));
    return;
  }
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < names.length) await submits.one(names[next++]);
  }));
}

/** The submit rows of every system on the Redis at `port`, each from an emptied server. */
export async function redisSubmitRows(port: number, procs: BenchProcesses, baselines: boolean, log: (line: string) => void): Promise<BenchRow[]> {
  log(`Redis: submitting, no worker running: ${SUBMITS} submits ${IN_FLIGHT} in flight, and in lists of ${LIST}; the submitter's CPU and heap per task`);
  const rows: BenchRow[] = [];
  const systems: SubmitSystem[] = baselines ? ['gatekeeper-redis', 'bullmq'] : ['gatekeeper-redis'];
  for (const bulk of [false, true]) {
    for (const system of systems) {
      await flushRedis(port);
      const stamp = `${Date.now()}`;
      const submits = await submitsOf(system, port, stamp);
      try {
        await submitAllOf(submits, Array.from({ length: WARMUP }, (_, i) => `w${i}`), bulk);
        const names = Array.from({ length: SUBMITS }, (_, i) => `t${i}`);
        const heap = heapAllocations();
        const cpu = cpuWindow(procs);
        const started = performance.now();
        await submitAllOf(submits, names, bulk);
        const elapsedMs = performance.now() - started;
        const used = cpu.stop();
        const allocated = heap.bytes();
        const per = (ms: number | null) => (ms === null ? null : round(ms / SUBMITS, 4)!);
        const clients = per(used.bench);
        const store = per(used.redis);
        const tasksPerSec = round(SUBMITS / (elapsedMs / 1000), 0);
        const kb = round(allocated / 1024 / SUBMITS, 1)!;
        log(`  ${system} ${bulk ? `in lists of ${LIST}` : `${IN_FLIGHT} in flight`}: ${tasksPerSec}/s, CPU per task ${clients} ms submitter + ${store} ms Redis, ${kb} KB allocated per task`);
        rows.push({
          scenario: bulk ? 'redis-submit-bulk' : 'redis-submit', system, nodes: 0, semaphores: 0, runs: SUBMITS, p50Ms: null, p99Ms: null,
          opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null, group: 'redis', tasksPerSec, processCpuMs: used,
          cpuMsPer: clients === null || store === null ? null : { unit: 'task', clients, store, total: round(clients + store, 4)! },
          heapKBPer: { unit: 'task', clients: kb },
        });
      } finally {
        await submits.close();
      }
    }
  }
  return rows;
}
