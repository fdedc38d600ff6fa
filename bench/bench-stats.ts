/** Runs `op` `count` times one after another; the milliseconds each call took. */
export async function timed(count: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await op(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
}

/** The p-th percentile (0..100) of `values`, or null when there are none. */
export function percentile(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Worker processes of the tasks throughput and latency rows on every backend (`BENCH_TASK_WORKERS=1,3`): what a task
 * costs must stay flat as workers are added, so the rows go past the 3 of a small deployment.
 */
export const TASK_WORKER_COUNTS: readonly number[] = (process.env.BENCH_TASK_WORKERS ?? '1,3,10').split(',').filter(Boolean).map(Number);

/** Rounds to `digits` decimals, keeping null. */
export function round(value: number | null, digits = 3): number | null {
  return value === null ? null : Number(value.toFixed(digits));
}

/** One result row, in the format other tools read (see docs/benchmarks.md). */
export interface BenchRow {
  scenario: 'decision-deny' | 'decision-grant' | 'decision-refresh' | 'decision-release' | 'cron-hold' | 'cron-release' | 'decorator-overhead' | 'leader-only-overhead'
    | 'leader-failover-kill' | 'leader-handover' | 'leader-steady' | 'allocation-join' | 'allocation-kill' | 'allocation-steady'
    | 'tasks-throughput' | 'tasks-latency' | 'tasks-detection' | 'tasks-burst' | 'tasks-backlog' | 'schedules-steady' | 'run-now'
    | 'floor-get' | 'floor-set' | 'floor-cas' | 'floor-cas-listened' | 'floor-set-throughput' | 'floor-task-lifecycle'
    | 'pg-tasks-throughput' | 'pg-tasks-latency' | 'pg-tasks-backlog'
    | 'redis-tasks-throughput' | 'redis-tasks-latency' | 'redis-tasks-burst' | 'redis-submit' | 'redis-submit-bulk' | 'idle-cluster' | 'fenced-write';
  system: 'gatekeeper' | 'gatekeeper+history' | 'gatekeeper+ledger' | 'pessimistic-lock' | 'redlock' | 'bare-cron' | 'dalloc-style' | 'bullmq' | 'hazelcast-raw' | 'redis-raw'
    | 'gatekeeper-postgres' | 'gatekeeper-postgres+history' | 'advisory-lock' | 'postgres-raw' | 'pg-boss' | 'graphile-worker' | 'bullmq-postgres'
    | 'gatekeeper-redis' | 'gatekeeper-redis+aof' | 'fenced-transaction' | 'plain-transaction' | 'one-more-statement';
  /**
   * The group a row was measured in, where its scenario and system alone do not say: `redis` for the rows of the redis
   * group (ours on Redis beside redlock, BullMQ and the raw Redis floors, all measured again in that group).
   */
  group?: 'redis';
  nodes: number;
  semaphores: number;
  /** Fenced-write rows: the database (`nodes`: concurrent writers), and whether they share one resource or have one each. */
  fencing?: { dialect: 'postgres' | 'mysql'; resources: 'one' | 'many' };
  runs: number;
  p50Ms: number | null;
  p99Ms: number | null;
  opsPerSec: number | null;
  storeOpsPerTick: number | null;
  roundTripsPerDecision: number | null;
  exactlyOncePct: number | null;
  cpuMsPerTickPerNode?: number | null;
  /**
   * Leader failover rows: ms from the signal (SIGKILL or SIGTERM) to the new leader's leader work starting, over
   * `runs` repetitions, with the bound (crash: lease + 2 x skew + one renewal) or target (handover: 1 s).
   */
  failoverMs?: { p50: number; max: number; boundMs: number; runs: number[] } | null;
  /** Leader steady rows: the whole cluster's store operations per second, by store, over a window of `windowS`. */
  storeOpsPerSec?: { total: number; permits: number; presence: number; perNode: number; windowS: number } | null;
  /**
   * Idle-cluster rows, per node per second with every capability on and nothing to do: round trips its clients sent
   * (`byCommand`), map calls by the store-call hook (`byStore`: by capability), and what the server counted
   * (`serverUnit`: commands, inner ones of scripts included; transactions), over `windowS`.
   */
  idle?: {
    /** Every round trip its clients sent (Redis commands, a script one; PostgreSQL queries); on Hazelcast the map calls. */
    roundTripsPerNodePerSec: number;
    storeCallsPerNodePerSec: number;
    serverCallsPerNodePerSec: number | null;
    serverUnit: string | null;
    byStore: Record<string, number>;
    byCommand: Record<string, number>;
    windowS: number;
  };
  /** Leader rows: the election's lease, the skew bound and the presence interval the nodes ran with. */
  settings?: { leaseMs: number; maxClockSkewMs: number; presenceIntervalMs: number };
  /** Allocation rows: how many resources are spread. */
  resources?: number;
  /** Allocation join/kill rows: resources that changed hands. */
  moved?: number;
  /** Allocation join/kill rows: the fewest that had to, for an even spread. */
  minimalMoves?: number;
  /** Allocation join/kill rows: ms from the joiner being up (or the kill) to every resource owned once, skew ≤ 1; null if one round never gets there. */
  convergeMs?: number | null;
  /** Allocation rows: largest minus smallest share once settled (or after the round, for the baseline). */
  skew?: number;
  /** Allocation rows: resources nobody alive owns at the end. */
  unowned?: number;
  /** Allocation join/kill rows: store round trips of all nodes during the rebalance. */
  storeOpsPerRebalance?: number | null;
  /** Tasks throughput rows: tasks completed per second, from the first submit to the last completion (latency rows: the submit rate; backlog rows: claims per second over the window). */
  tasksPerSec?: number | null;
  /**
   * Tasks throughput rows: round trips per task, every node's and the submitter's: store calls (gatekeeper, on either
   * backend) or Redis commands sent, a Lua script counting as one (BullMQ), or `pg` client queries (pg-boss,
   * graphile-worker: each `Client#query`, a multi-statement text counting as one).
   */
  roundTripsPerTask?: number | null;
  /** PostgreSQL tasks throughput rows: `pg` client queries per task, every node's and the submitter's, counted alike for every system. */
  pgQueriesPerTask?: number | null;
  /** Redis tasks rows: Redis commands sent per task (a Lua script is one), every node's and the submitter's, counted alike for ours and BullMQ. */
  redisCommandsPerTask?: number | null;
  /** Tasks throughput rows: store calls per worker node per second with no work (the same processes, right after). */
  idleOpsPerSecPerNode?: number | null;
  /** Tasks detection rows: ms from a worker's SIGKILL to its task starting on another node. */
  detectionMs?: number | null;
  /** Tasks detection rows (gatekeeper): the lease, scan interval and skew bound the nodes ran with. */
  taskSettings?: { leaseMs: number; scanMs: number; maxClockSkewMs: number };
  /**
   * CPU ms (utime + stime from /proc) each process spent over the row's measured window: the bench process (the
   * nodes of decision and cron rows; the submitter and the harness of tasks rows), the member's JVM, the Redis
   * server, the PostgreSQL server (its postmaster and every process below it, reaped backends included), the tasks
   * rows' worker processes (summed); null where there is no such process in the run.
   */
  processCpuMs?: { bench: number | null; member: number | null; redis: number | null; postgres?: number | null; workers: number | null; windowMs: number } | null;
  /**
   * Whole-system CPU ms per unit of work over the window: `clients` is the worker processes (tasks) or the bench
   * process that runs the nodes (decisions, cron, floors); `store` is the member (gatekeeper, pessimistic lock,
   * raw Hazelcast), Redis (redlock, BullMQ, raw Redis) or the PostgreSQL server's processes (gatekeeper-postgres,
   * advisory lock, raw PostgreSQL, pg-boss, graphile-worker); `total` their sum. The tasks rows leave the bench
   * process (submitter, harness) out.
   */
  cpuMsPer?: { unit: 'task' | 'decision' | 'job tick' | 'call' | 'claim'; clients: number; store: number; total: number } | null;
  /**
   * KB allocated on V8's heap per unit of work over the window, every object whether collected or kept
   * (bench/heap-allocations.ts): on the tasks throughput and burst rows per task, `clients` the worker processes
   * together and `bench` the bench process (the submitter and the harness); on the cron rows per node and job tick,
   * `clients` the bench process, which runs the nodes; on the submit rows per task, `clients` the submitter (the
   * bench process, alone).
   */
  heapKBPer?: { unit: 'task' | 'job tick'; clients: number; bench?: number } | null;
  /** Tasks throughput and burst rows: tasks each worker process started, in node order. */
  shares?: number[];
  /** Tasks burst rows: the largest share, % of the burst. */
  maxSharePct?: number | null;
  /** Tasks backlog rows (tasks-backlog, pg-tasks-backlog): pending tasks besides the measured ones when the worker started. */
  backlog?: number;
  /** Tasks backlog rows: the longest slot cycle (a claim that fetches a batch pays for it once, which p99 may hide). */
  maxMs?: number | null;
  /** Tasks backlog rows, on either store (whose p50Ms/p99Ms are the one slot's cycle, start to next start): from a completion to the next start. */
  claimGapMs?: { p50: number; p99: number } | null;
  /** Tasks backlog rows: bytes the worker process read (/proc/<pid>/io rchar: its sockets, all of them) per claim over the window. */
  bytesPerClaim?: number | null;
  /** Allocation rows: the lease, skew bound and rebalance delay the nodes ran with. */
  allocationSettings?: { leaseMs: number; maxClockSkewMs: number; rebalanceDelayMs: number };
}
