/*
 * The PostgreSQL task-queue baselines of the tasks-postgres rows, as both sides use them: pg-boss, graphile-worker
 * and BullMQ on its PostgreSQL backend, each in a schema of its own on the bench's one server, with the settings the rows report (the
 * worker processes in bench/task-node.ts, the submitters in the bench process), and the `pg` query counter every
 * process of those rows uses for its round trips.
 *
 * Both packages are ESM only: they are loaded with a dynamic import (a `require` of an ES module, which Node 20.19+
 * does without a flag), only by the processes that use them.
 */
import pg from 'pg';
import type { ConstructorOptions, WorkOptions } from 'pg-boss';
import type { RunnerOptions } from 'graphile-worker';

/** Tasks each worker process runs at once, for every system (as the Hazelcast and BullMQ rows). */
export const PG_CONCURRENCY = 4;
/** pg-boss's schema on the bench's server. */
export const PG_BOSS_SCHEMA = 'pgboss_bench';
/** graphile-worker's schema on the bench's server (its default). */
export const GRAPHILE_SCHEMA = 'graphile_worker';
/** BullMQ's schema on the bench's server (its PostgreSQL backend's namespace for every queue). */
export const BULLMQ_PG_SCHEMA = 'bullmq_bench';
/** The one queue (pg-boss, BullMQ) or task identifier (graphile-worker) of the rows. */
export const NOOP_QUEUE = 'noop';

/**
 * The pg-boss instance: its LISTEN/NOTIFY listener on (the queue opts in with `notify: true`), so a worker wakes
 * when a job is created rather than on its next poll; everything else at its defaults (a pool of 10, the
 * supervisor and the scheduler on).
 */
export const pgBossOptions = (url: string): ConstructorOptions => ({ connectionString: url, schema: PG_BOSS_SCHEMA, useListenNotify: true });

/**
 * pg-boss's `work` options: 4 jobs at once per process as two fetch loops of 2 (`localConcurrency` x `batchSize`),
 * each fetching again at once while a fetch comes back full (`burstWhenBatchFull`: without a burst trigger a loop
 * waits out its polling interval after every fetch, however much is queued), and both polling intervals at their
 * minimum, 0.5 s (defaults: 2 s, and 30 s when NOTIFY is active). PGBOSS_WORK=<loops>x<batch> overrides the split
 * (diagnostics).
 */
export function pgBossWorkOptions(): WorkOptions {
  const [loops, batch] = (process.env.PGBOSS_WORK ?? '2x2').split('x').map(Number);
  return { localConcurrency: loops, batchSize: batch, burstWhenBatchFull: batch > 1, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 0.5 };
}

/**
 * graphile-worker's runner: 4 jobs at once (`concurrency`: 1 for the backlog rows' one slot), new jobs heard by
 * LISTEN/NOTIFY, and every other setting at its default (poll interval 2 s, only for jobs due later; no local
 * queue; no batching of completions; a pool of 10).
 */
export const graphileRunnerOptions = (url: string, concurrency = PG_CONCURRENCY): Pick<RunnerOptions, 'connectionString' | 'concurrency' | 'schema' | 'noHandleSignals'> => ({
  connectionString: url, concurrency, schema: GRAPHILE_SCHEMA, noHandleSignals: true,
});

/**
 * BullMQ's PostgreSQL backend (`createPostgresBackend`, BullMQ 6): a pool of its own on `url` in
 * {@link BULLMQ_PG_SCHEMA}; `migrate`: the submitter's, which creates the schema before any worker starts.
 */
export const bullmqPostgresConnection = (url: string, migrate = false) => ({ connectionString: url, schema: BULLMQ_PG_SCHEMA, migrate });

/**
 * Counts every query this process's `pg` clients send from the first call on (each `Client#query`: a pool's query is
 * one, a LISTEN is one, a multi-statement text is one), the libraries' own included: they import the same `pg`.
 * Installed once, by the processes of the tasks-postgres rows only (the other rows' calls stay unwrapped).
 */
export function countPgQueries(): { readonly sent: number } {
  if (counter) return counter;
  const installed = { sent: 0 };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    installed.sent++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return (counter = installed);
}
let counter: { sent: number } | undefined;
