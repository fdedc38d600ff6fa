/*
 * The tasks-postgres rows of npm run bench: tasks on PostgreSQL, ours (`gatekeeper-postgres`: the module with
 * `backend: 'postgres'`) against pg-boss, graphile-worker and BullMQ's PostgreSQL backend (`bullmq-postgres`) on the
 * same server, each with a no-op handler, 4 tasks
 * at once per worker process and 16 submits in flight from the bench process (as the Hazelcast and BullMQ rows):
 *   - throughput: BENCH_PG_TASKS (3,000) tasks from the first submit to the last completion, on 1 and on 3 worker
 *     processes, after an unmeasured warm-up burst of BENCH_PG_TASK_WARMUP (1,000) on the same processes;
 *   - CPU per task of the whole system over that window: the worker processes and every process of the server
 *     (the postmaster and all below it, reaped backends included; bench/proc-cpu.ts treeCpuMsOf);
 *   - round trips per task: store calls (ours, the store's operationCount()) or `pg` queries (the baselines), and
 *     `pg` queries for every system alike, the submitter's included;
 *   - latency from submit to handler start at a steady 20/s on 1 worker;
 *   - backlog (pg-tasks-backlog): what a claim costs when many tasks wait, against a near-empty queue, as
 *     bench/task-backlog.ts on Hazelcast: one worker process with one slot starts on BENCH_PG_BACKLOG pending no-op
 *     tasks (0 and 100,000 by default; a list, e.g. 10000,50000) plus 501 more, takes one, then 500 in a row; the
 *     slot's cycle (handler start to next start), the completion-to-next-start gap, and the bytes the worker
 *     process read per claim (/proc/<pid>/io rchar) over those 500.
 * Each row starts from empty schemas (every system's dropped, then a CHECKPOINT) with a fresh submitter and fresh worker
 * processes. The settings of each system are in bench/pg-task-systems.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { percentile, round, type BenchRow, TASK_WORKER_COUNTS } from './bench-stats';
import { heapKBPer, heapNow } from './heap-allocations';
import { bytesReadOf, cpuWindow } from './proc-cpu';
import { BULLMQ_PG_SCHEMA, bullmqPostgresConnection, countPgQueries, GRAPHILE_SCHEMA, NOOP_QUEUE, PG_BOSS_SCHEMA, PG_CONCURRENCY, pgBossOptions } from './pg-task-systems';
import { gatekeeperPostgresSubmitter, submitAll, type BenchProcesses, type Submitter } from './task-submitters';
import { allSeen, preciseNow, startNodes, stopNodes, waitFor, type WorkerNode } from './worker-node';

const PG_TASKS = Number(process.env.BENCH_PG_TASKS ?? 3000);
const PG_WARMUP = Number(process.env.BENCH_PG_TASK_WARMUP ?? 1000);
const LATENCY_TASKS = 200;
const LATENCY_RATE_PER_S = 20;
/** The backlog rows' sizes: pending tasks besides the measured ones (0 is the near-empty queue). */
const PG_BACKLOGS = [0, ...(process.env.BENCH_PG_BACKLOG ?? '100000').split(',').map(Number).filter((n) => n > 0)];
/** Backlog rows: claims measured in a row, after one unmeasured. */
const BACKLOG_MEASURED = 500;
/** Backlog rows: submits in flight while ours fills the backlog (not measured); the baselines insert in batches of BACKLOG_BATCH. */
const BACKLOG_IN_FLIGHT = 64;
const BACKLOG_BATCH = 1000;
/**
 * Backlog rows: pg-boss's one slot, one fetch loop (`work` with localConcurrency 1) of batch 2 with
 * `burstWhenBatchFull`, as each of the throughput rows' two loops: at batch 1 pg-boss ignores that trigger and the
 * loop waits its polling interval (0.5 s) after every fetch, backlog or not. A batch's jobs run one after another.
 */
const PGBOSS_ONE_SLOT = process.env.BENCH_PG_BACKLOG_PGBOSS_WORK ?? '1x2';
/** gatekeeper's schema on the server (the backend's default). */
const GATEKEEPER_SCHEMA = 'gatekeeper';

export type PgSystem = 'gatekeeper-postgres' | 'pg-boss' | 'graphile-worker' | 'bullmq-postgres';
const ALL_SYSTEMS: PgSystem[] = ['gatekeeper-postgres', 'pg-boss', 'graphile-worker', 'bullmq-postgres'];
/** BENCH_PG_SYSTEMS=pg-boss,... runs only some (diagnostics). */
const SYSTEMS = process.env.BENCH_PG_SYSTEMS ? (process.env.BENCH_PG_SYSTEMS.split(',') as PgSystem[]) : ALL_SYSTEMS;

const idOf = (system: PgSystem, name: string) => (system === 'gatekeeper-postgres' ? `noop:${name}` : `noop-${name}`);
const timeOf = (nodes: WorkerNode[], kind: 'started' | 'completed', id: string) => nodes.find((n) => n[kind].has(id))![kind].get(id)!;

/** This process's `pg` queries (the submitter's), counted from the first tasks-postgres row on. */
let pgQueries: { readonly sent: number } = { sent: 0 };

/** Every process's round trips and `pg` queries so far: the submitter's (this process) and each node's. */
async function counts(submitter: Submitter, nodes: WorkerNode[]): Promise<{ trips: number; queries: number }> {
  let trips = await submitter.operations();
  let queries = pgQueries.sent;
  for (const node of nodes) {
    trips += await node.operations();
    queries += node.lastQueries();
  }
  return { trips, queries };
}

/** A submitter that can also fill a backlog fast: `load` puts every name's task in the queue, by any means the system offers. */
type PgSubmitter = Submitter & { load(names: string[]): Promise<void> };

/** pg-boss's producer: `send` of a job whose payload is the task's name, on a queue that NOTIFYs its workers; `load` by `insert` in batches. */
async function pgBossSubmitter(url: string): Promise<PgSubmitter> {
  const { PgBoss } = await import('pg-boss');
  // No listener in the producer: the queue's notify option makes every send NOTIFY, whoever sends it.
  const boss = new PgBoss({ ...pgBossOptions(url), useListenNotify: false });
  boss.on('error', (error: Error) => process.stderr.write(`pg-boss (submitter): ${error.message}\n`));
  await boss.start();
  await boss.createQueue(NOOP_QUEUE, { notify: true });
  return {
    submit: async (_type, name) => {
      await boss.send(NOOP_QUEUE, { name });
    },
    load: async (names) => {
      for (let i = 0; i < names.length; i += BACKLOG_BATCH) await boss.insert(NOOP_QUEUE, names.slice(i, i + BACKLOG_BATCH).map((name) => ({ data: { name } })));
    },
    operations: async () => pgQueries.sent,
    close: () => boss.stop({ graceful: false, close: true }),
  };
}

/** graphile-worker's producer: `addJob` through its worker utils (the schema migrated first); `load` by `addJobs` in batches. */
async function graphileSubmitter(url: string): Promise<PgSubmitter> {
  const { makeWorkerUtils, Logger } = await import('graphile-worker');
  const logger = new Logger(() => (level, message) => {
    if (level === 'error') process.stderr.write(`graphile-worker (submitter): ${message}\n`);
  });
  const utils = await makeWorkerUtils({ connectionString: url, schema: GRAPHILE_SCHEMA, logger });
  await utils.migrate();
  return {
    submit: async (_type, name) => {
      await utils.addJob(NOOP_QUEUE, { name });
    },
    load: async (names) => {
      for (let i = 0; i < names.length; i += BACKLOG_BATCH) await utils.addJobs(names.slice(i, i + BACKLOG_BATCH).map((name) => ({ identifier: NOOP_QUEUE, payload: { name } })));
    },
    operations: async () => pgQueries.sent,
    close: async () => {
      await utils.release();
    },
  };
}

/**
 * BullMQ's producer on its PostgreSQL backend: `Queue.add` of a job whose payload is the task's name, with a job id
 * (idempotent, as the Redis rows' adds); `load` by `addBulk` in batches. It migrates the schema, before any worker starts.
 */
async function bullmqPostgresSubmitter(url: string): Promise<PgSubmitter> {
  const { Queue, createPostgresBackend } = await import('bullmq');
  const queue = new Queue(NOOP_QUEUE, { connection: bullmqPostgresConnection(url, true) }, createPostgresBackend);
  queue.on('error', (error: Error) => process.stderr.write(`bullmq (postgres submitter): ${error.message}\n`));
  await queue.waitUntilReady();
  const add = (name: string) => ({ name: NOOP_QUEUE, data: { name }, opts: { jobId: `noop-${name}`, removeOnComplete: { count: 100_000 } } });
  return {
    submit: async (_type, name) => {
      const job = add(name);
      await queue.add(job.name, job.data, job.opts);
    },
    load: async (names) => {
      for (let i = 0; i < names.length; i += BACKLOG_BATCH) await queue.addBulk(names.slice(i, i + BACKLOG_BATCH).map(add));
    },
    operations: async () => pgQueries.sent,
    close: () => queue.close(),
  };
}

async function openSubmitter(system: PgSystem, url: string, mapPrefix: string): Promise<PgSubmitter> {
  if (system === 'pg-boss') return pgBossSubmitter(url);
  if (system === 'bullmq-postgres') return bullmqPostgresSubmitter(url);
  if (system === 'graphile-worker') return graphileSubmitter(url);
  const submitter = await gatekeeperPostgresSubmitter(url, mapPrefix);
  // Ours has one way in, the submit (many in flight share a statement).
  return { ...submitter, load: async (names) => void (await submitAll(submitter, 'noop', names, (name) => idOf(system, name), BACKLOG_IN_FLIGHT)) };
}

/** Empty schemas for the next row: every system's dropped, then a checkpoint, so no row pays for another's dirty pages. */
async function resetServer(url: string): Promise<void> {
  const client = new Client({ connectionString: url, application_name: 'bench reset' });
  await client.connect();
  try {
    for (const schema of [GATEKEEPER_SCHEMA, PG_BOSS_SCHEMA, GRAPHILE_SCHEMA, BULLMQ_PG_SCHEMA]) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/** A burst of `names` from the one submitter until every task completed: elapsed s, round trips, queries, CPU, per-task submit-to-start latency and each node's share. */
async function burst(system: PgSystem, nodes: WorkerNode[], submitter: Submitter, names: string[], procs: BenchProcesses) {
  const before = await counts(submitter, nodes);
  const heapBefore = heapNow(nodes);
  const cpu = cpuWindow({ ...procs, workers: nodes.map((n) => n.pid) });
  const started = preciseNow();
  const submitted = await submitAll(submitter, 'noop', names, (name) => idOf(system, name));
  const ids = names.map((name) => idOf(system, name));
  await allSeen(nodes, 'completed', ids, `${system}: ${names.length} tasks completed`, 300_000);
  const used = cpu.stop();
  const lastDone = Math.max(...ids.map((id) => timeOf(nodes, 'completed', id)));
  const after = await counts(submitter, nodes);
  const heap = heapKBPer('task', heapBefore, heapNow(nodes), names.length);
  const latency = ids.map((id) => timeOf(nodes, 'started', id) - submitted.get(id)!);
  const shares = nodes.map((node) => ids.filter((id) => node.started.has(id)).length);
  return { elapsedS: (lastDone - started) / 1000, trips: after.trips - before.trips, queries: after.queries - before.queries, cpu: used, heap, latency, shares };
}

/** One system's rows on `nodeCount` fresh worker processes: throughput (and on 1 node, the steady latency). */
async function measure(system: PgSystem, nodeCount: number, url: string, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow[]> {
  await resetServer(url);
  const mapPrefix = `bench-${Date.now()}`;
  const submitter = await openSubmitter(system, url, mapPrefix);
  const base = { system, nodes: nodeCount, semaphores: 0, opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null } as const;
  try {
    const env: NodeJS.ProcessEnv = {
      // The module's default scan interval (5 s): new work is signalled, the scan only finds lapsed leases. BENCH_PG_SCAN_MS: diagnostics.
      CONCURRENCY: String(PG_CONCURRENCY), SCAN_MS: process.env.BENCH_PG_SCAN_MS ?? '5000', HANG_LEASE_MS: '5000', MAP_PREFIX: mapPrefix, PG_URL: url,
      ...(system === 'gatekeeper-postgres' && { GATEKEEPER_BACKEND: 'postgres', GATEKEEPER_PG_URL: url }),
    };
    const nodes = await startNodes(system, nodeCount, env, `${system}-${nodeCount}`);
    try {
      const run = `${system}-${nodeCount}-${Date.now()}`;
      if (PG_WARMUP > 0) await burst(system, nodes, submitter, Array.from({ length: PG_WARMUP }, (_, i) => `${run}-w${i}`), procs);
      const done = await burst(system, nodes, submitter, Array.from({ length: PG_TASKS }, (_, i) => `${run}-t${i}`), procs);
      const tasksPerSec = round(PG_TASKS / done.elapsedS, 0);
      const { workers, postgres } = done.cpu;
      const cpuMsPer = workers === null || postgres === null ? null
        : { unit: 'task' as const, clients: round(workers / PG_TASKS, 3)!, store: round(postgres / PG_TASKS, 3)!, total: round((workers + postgres) / PG_TASKS, 3)! };
      const roundTripsPerTask = round(done.trips / PG_TASKS, 2);
      const pgQueriesPerTask = round(done.queries / PG_TASKS, 2);
      log(`  ${system} ${nodeCount} node(s): ${PG_TASKS} tasks in ${round(done.elapsedS, 2)} s = ${tasksPerSec}/s, ${roundTripsPerTask} round trips (${pgQueriesPerTask} pg queries) per task, `
        + `per node ${done.shares.join('/')}, CPU per task ${cpuMsPer ? `${cpuMsPer.clients} ms workers + ${cpuMsPer.store} ms PostgreSQL = ${cpuMsPer.total} ms` : 'n/a'} (bench process ${done.cpu.bench} ms); heap per task ${done.heap ? `${done.heap.clients} KB workers, ${done.heap.bench} KB bench process` : 'n/a'}`);
      const rows: BenchRow[] = [{
        ...base, scenario: 'pg-tasks-throughput', runs: PG_TASKS, p50Ms: round(percentile(done.latency, 50)), p99Ms: round(percentile(done.latency, 99)),
        tasksPerSec, roundTripsPerTask, pgQueriesPerTask, processCpuMs: done.cpu, cpuMsPer, heapKBPer: done.heap, shares: done.shares,
      }];
      if (nodeCount === 1) {
        const steady = Array.from({ length: LATENCY_TASKS }, (_, i) => `${run}-l${i}`);
        const at = new Map<string, number>();
        for (const name of steady) {
          at.set(name, preciseNow());
          await submitter.submit('noop', name);
          await sleep(1000 / LATENCY_RATE_PER_S);
        }
        await allSeen(nodes, 'started', steady.map((name) => idOf(system, name)), `${system}: the steady tasks started`, 60_000);
        const latency = steady.map((name) => timeOf(nodes, 'started', idOf(system, name)) - at.get(name)!);
        log(`  ${system} 1 node: submit to start at ${LATENCY_RATE_PER_S}/s p50 ${round(percentile(latency, 50))} ms, p99 ${round(percentile(latency, 99))} ms`);
        rows.push({ ...base, scenario: 'pg-tasks-latency', runs: LATENCY_TASKS, p50Ms: round(percentile(latency, 50)), p99Ms: round(percentile(latency, 99)), tasksPerSec: LATENCY_RATE_PER_S });
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
 * One backlog row: a fresh queue of `backlog` + BACKLOG_MEASURED + 1 pending no-op tasks, one worker process with one
 * slot (CONCURRENCY 1; pg-boss PGBOSS_ONE_SLOT), one unmeasured claim, then BACKLOG_MEASURED in a row.
 */
async function backlogRow(system: PgSystem, backlog: number, url: string, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow> {
  await resetServer(url);
  const mapPrefix = `bench-backlog-${Date.now()}`;
  const submitter = await openSubmitter(system, url, mapPrefix);
  try {
    const names = Array.from({ length: backlog + BACKLOG_MEASURED + 1 }, (_, i) => `bk${i}`);
    const loadStart = Date.now();
    await submitter.load(names);
    log(`  ${system}: ${names.length} tasks pending (loaded in ${round((Date.now() - loadStart) / 1000, 1)} s), starting one worker with one slot`);
    const env: NodeJS.ProcessEnv = {
      CONCURRENCY: '1', SCAN_MS: process.env.BENCH_PG_SCAN_MS ?? '5000', HANG_LEASE_MS: '5000', MAP_PREFIX: mapPrefix, PG_URL: url, PGBOSS_WORK: PGBOSS_ONE_SLOT,
      ...(system === 'gatekeeper-postgres' && { GATEKEEPER_BACKEND: 'postgres', GATEKEEPER_PG_URL: url }),
    };
    const [node] = await startNodes(system, 1, env, `${system}-backlog-${backlog}`);
    try {
      await waitFor([node], `${system}: the first backlog task completed`, () => node.completed.size >= 1, 300_000);
      const cpu = cpuWindow({ ...procs, workers: [node.pid] });
      const readBefore = bytesReadOf(node.pid);
      await waitFor([node], `${system}: ${BACKLOG_MEASURED} backlog tasks completed`, () => node.completed.size >= 1 + BACKLOG_MEASURED, 300_000);
      const readAfter = bytesReadOf(node.pid);
      const used = cpu.stop();
      // One slot: starts and completions alternate, in the order the worker printed them (see bench/task-backlog.ts).
      const starts = [...node.started.values()];
      const completions = [...node.completed.values()];
      const cycles = Array.from({ length: BACKLOG_MEASURED }, (_, k) => starts[k + 1] - starts[k]);
      const gaps = Array.from({ length: BACKLOG_MEASURED }, (_, k) => starts[k + 1] - completions[k]);
      const bytesPerClaim = readBefore === undefined || readAfter === undefined ? null : Math.round((readAfter - readBefore) / BACKLOG_MEASURED);
      const claimsPerSec = round(BACKLOG_MEASURED / (used.windowMs / 1000), 0);
      const cpuMsPer = used.workers === null || used.postgres === null ? null
        : { unit: 'claim' as const, clients: round(used.workers / BACKLOG_MEASURED, 3)!, store: round(used.postgres / BACKLOG_MEASURED, 3)!, total: round((used.workers + used.postgres) / BACKLOG_MEASURED, 3)! };
      log(`  ${system} with ${backlog} more pending: slot cycle p50 ${round(percentile(cycles, 50))} ms, p99 ${round(percentile(cycles, 99))} ms, max ${round(Math.max(...cycles))} ms `
        + `(completion to next start p50 ${round(percentile(gaps, 50))} ms, p99 ${round(percentile(gaps, 99))} ms), ${bytesPerClaim} bytes read per claim, ${claimsPerSec} claims/s, `
        + `CPU per claim ${cpuMsPer ? `${cpuMsPer.clients} ms worker + ${cpuMsPer.store} ms PostgreSQL` : 'n/a'}`);
      return {
        scenario: 'pg-tasks-backlog', system, nodes: 1, semaphores: 0, runs: BACKLOG_MEASURED, p50Ms: round(percentile(cycles, 50)), p99Ms: round(percentile(cycles, 99)),
        maxMs: round(Math.max(...cycles)), claimGapMs: { p50: round(percentile(gaps, 50))!, p99: round(percentile(gaps, 99))! },
        opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
        tasksPerSec: claimsPerSec, backlog, bytesPerClaim, processCpuMs: used, cpuMsPer,
      };
    } finally {
      await stopNodes([node]);
    }
  } finally {
    await submitter.close();
  }
}

/** Every tasks-postgres row, on the bench's server at `url` (`procs.postgres`: its postmaster, for the CPU columns). */
export async function pgTaskRows(url: string, procs: BenchProcesses, log: (line: string) => void): Promise<BenchRow[]> {
  pgQueries = countPgQueries();
  const rows: BenchRow[] = [];
  // Each node count in turn for every system, so a slow spell of the shared machine is less likely to hit one system only.
  // BENCH_PG_TASKS=0 (diagnostics) leaves the throughput and latency rows out.
  if (PG_TASKS > 0) for (const nodes of TASK_WORKER_COUNTS) for (const system of SYSTEMS) rows.push(...(await measure(system, nodes, url, procs, log)));
  // The backlog rows, each size in turn for every system (BENCH_PG_BACKLOG=0 leaves only the near-empty queue's).
  for (const backlog of PG_BACKLOGS) for (const system of SYSTEMS) rows.push(await backlogRow(system, backlog, url, procs, log));
  return rows;
}
