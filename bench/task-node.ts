/*
 * A worker node of the tasks bench rows (issue 12), run as a real process (ts-node) by bench/tasks.ts. SYSTEM says
 * which: `gatekeeper` (a Nest application context with the module on the bench member, `tasks` options from the
 * environment, handlers by `@TaskHandler` as an application has them) or `bullmq` (a BullMQ Worker on the bench's
 * Redis with the same concurrency; queue QUEUE, default `bench`). Both run the same two job types: `noop` (returns at once) and `hang` (never
 * returns; the detection row SIGKILLs its node). The tasks-postgres rows (bench/pg-tasks.ts) add
 * `gatekeeper-postgres` (the same module with GATEKEEPER_BACKEND=postgres on GATEKEEPER_PG_URL), `pg-boss`,
 * `graphile-worker` and `bullmq-postgres` (BullMQ's PostgreSQL backend), on PG_URL with the settings in
 * bench/pg-task-systems.ts, `noop` only; those three print the task's id as `noop-<name>`, the name being the job's
 * payload. It prints:
 *   READY                  once it takes work
 *   S <id> <unix ms>       when a handler starts (fractional ms, from the process's high-resolution clock)
 *   C <id> <unix ms>       when a noop handler returns
 *   OPS <unix ms> <n> [q]  on SIGUSR2: its round trips so far: task store calls (gatekeeper) or Redis commands its
 *                          connections sent, a Lua script counting as one (BullMQ), or `pg` queries (pg-boss,
 *                          graphile-worker, BullMQ on PostgreSQL); q: `pg` queries, on the PostgreSQL systems (Redis commands sent, on
 *                          gatekeeper with GATEKEEPER_BACKEND=redis: the redis group's `gatekeeper-redis`)
 *   HEAP <bytes>           on SIGUSR2, just before OPS: the bytes it allocated on V8's heap so far (heap-allocations.ts)
 * PROFILE_DIR=<dir> (diagnostics): from READY to SIGTERM, a V8 CPU profile (<system>-<pid>.cpuprofile; with
 * PROFILE_HEAP=1 a sampling profile of every allocation instead, <system>-<pid>.heapprofile) and the socket writes to the store, their bytes and the tasks started (<system>-<pid>.counts.json), written there.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker } from 'bullmq';
import Redis from 'ioredis';
import { GatekeeperModule, TaskHandler, type TaskContext, type TaskStore } from '../lib';
import { GATEKEEPER_TASK_STORE } from '../lib/nest/gatekeeper.constants';
import { env, gatekeeperOptionsFromEnv } from '../test/fixtures/fixture-process';
import { heapAllocations } from './heap-allocations';
import { bullmqPostgresConnection, countPgQueries, graphileRunnerOptions, NOOP_QUEUE, pgBossOptions, pgBossWorkOptions } from './pg-task-systems';

const say = (line: string) => process.stdout.write(`${line}\n`);
/** Wall-clock ms with µs precision: claim gaps are fractions of a millisecond. */
const now = () => (performance.timeOrigin + performance.now()).toFixed(3);
const concurrency = Number(env('CONCURRENCY'));

@Injectable()
class BenchHandlers {
  @TaskHandler('noop', { lease: '30s' })
  noop(_data: unknown, task: TaskContext): void {
    say(`S ${task.task.id} ${now()}`);
    say(`C ${task.task.id} ${now()}`);
  }

  @TaskHandler('hang', { lease: Number(env('HANG_LEASE_MS')) })
  hang(_data: unknown, task: TaskContext): Promise<void> {
    say(`S ${task.task.id} ${now()}`);
    return new Promise(() => undefined);
  }
}

async function gatekeeper(): Promise<void> {
  @Module({
    imports: [
      GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
        membership: false,
        tasks: { concurrency, scanInterval: Number(env('SCAN_MS')) },
      })),
    ],
    providers: [BenchHandlers],
  })
  class TaskBenchModule {}
  const app = await NestFactory.createApplicationContext(TaskBenchModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  const store = app.get<TaskStore>(GATEKEEPER_TASK_STORE as never, { strict: false });
  // `pg` queries too on PostgreSQL (nothing counts them on Hazelcast: no OPS line change there).
  const queries = process.env.GATEKEEPER_BACKEND === 'postgres' ? countPgQueries()
    // On Redis: the commands its connections sent (the redis group's rows, bench/redis-tasks.ts), counted as BullMQ's are.
    : process.env.GATEKEEPER_BACKEND === 'redis' ? countRedisCommands : undefined;
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${store.operationCount()}${queries ? ` ${queries.sent}` : ''}`));
  if (process.env.TRACE_CALLS === '1') traceCalls(store);
}

/**
 * For bench/backlog-profile.ts: prints `Q <what> <start ms> <duration ms>` for every call the task store makes
 * (diagnostics only, through the store's private call helper).
 */
function traceCalls(store: TaskStore): void {
  const calls = (store as unknown as { calls?: { run: (operation: () => Promise<unknown>, what: string, timeoutMs?: number) => Promise<unknown> } }).calls;
  if (!calls) return;
  const run = calls.run.bind(calls);
  calls.run = async (operation, what, timeoutMs) => {
    const start = performance.timeOrigin + performance.now();
    let size = '';
    try {
      const result = await run(operation, what, timeoutMs);
      // What came back: the values a query returned, or a count.
      size = typeof result === 'number' ? `=${result}` : typeof (result as { size?: unknown })?.size === 'function' ? `#${(result as { size(): number }).size()}` : '';
      return result;
    } finally {
      say(`Q ${what.replace(/ /g, '_')}${size} ${start.toFixed(3)} ${(performance.timeOrigin + performance.now() - start).toFixed(3)}`);
    }
  };
}

async function bullmq(): Promise<void> {
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${countRedisCommands.sent}`));
  const connection = { host: '127.0.0.1', port: Number(env('REDIS_PORT')), maxRetriesPerRequest: null };
  const worker = new Worker(process.env.QUEUE ?? 'bench', async (job) => {
    say(`S ${job.id} ${now()}`);
    if (job.name === 'hang') return new Promise(() => undefined);
    say(`C ${job.id} ${now()}`);
    return null;
  }, { connection, concurrency, removeOnComplete: { count: 100_000 } });
  await worker.waitUntilReady();
  // Forced: a job that never ends (the hang job of the detection row) must not hold the shutdown for ever.
  process.on('SIGTERM', () => void worker.close(true).then(() => process.exit(0)));
}

/**
 * A pg-boss worker on PG_URL: `noop` jobs, 4 at once (bench/pg-task-systems.ts; PGBOSS_WORK sets the fetch loops
 * and their batch, as the backlog rows' one slot does); the queue exists already (the submitter made it).
 */
async function pgBoss(): Promise<void> {
  const pgQueries = countPgQueries();
  const { PgBoss } = await import('pg-boss');
  const boss = new PgBoss(pgBossOptions(env('PG_URL')));
  boss.on('error', (error: Error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  await boss.work<{ name: string }>(NOOP_QUEUE, pgBossWorkOptions(), async (jobs) => {
    for (const job of jobs) {
      say(`S noop-${job.data.name} ${now()}`);
      say(`C noop-${job.data.name} ${now()}`);
    }
  });
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${pgQueries.sent} ${pgQueries.sent}`));
  process.on('SIGTERM', () => void boss.stop({ graceful: true, timeout: 2_000 }).finally(() => process.exit(0)));
}

/** A BullMQ Worker on its PostgreSQL backend on PG_URL: `noop` jobs, CONCURRENCY at once; the submitter's queue migrated the schema. */
async function bullmqPostgres(): Promise<void> {
  const pgQueries = countPgQueries();
  const { createPostgresBackend } = await import('bullmq');
  const worker = new Worker(NOOP_QUEUE, async (job) => {
    const { name } = job.data as { name: string };
    say(`S noop-${name} ${now()}`);
    say(`C noop-${name} ${now()}`);
    return null;
  }, { connection: bullmqPostgresConnection(env('PG_URL')), concurrency, removeOnComplete: { count: 100_000 } }, createPostgresBackend);
  worker.on('error', (error: Error) => process.stderr.write(`bullmq (postgres): ${error.message}\n`));
  await worker.waitUntilReady();
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${pgQueries.sent} ${pgQueries.sent}`));
  process.on('SIGTERM', () => void worker.close(true).then(() => process.exit(0)));
}

/** A graphile-worker runner on PG_URL: `noop` jobs, CONCURRENCY at once (4; bench/pg-task-systems.ts); the schema exists already (the submitter migrated it). */
async function graphileWorker(): Promise<void> {
  const pgQueries = countPgQueries();
  const { run, Logger } = await import('graphile-worker');
  // Its own logging to stderr, errors only: stdout is the bench's protocol.
  const logger = new Logger(() => (level, message) => {
    if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
  const runner = await run({
    ...graphileRunnerOptions(env('PG_URL'), concurrency),
    logger,
    taskList: {
      [NOOP_QUEUE]: async (payload) => {
        const { name } = payload as { name: string };
        say(`S noop-${name} ${now()}`);
        say(`C noop-${name} ${now()}`);
      },
    },
  });
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${pgQueries.sent} ${pgQueries.sent}`));
  process.on('SIGTERM', () => void runner.stop().finally(() => process.exit(0)));
}

/** Counts every command this process's ioredis connections send (BullMQ's included: it uses the same ioredis). */
export const countRedisCommands = (() => {
  const counter = { sent: 0 };
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof send>) {
    counter.sent++;
    return send.apply(this, args);
  };
  return counter;
})();

/** PROFILE_DIR: profiles the process from now until SIGTERM (the bench's stop), for where a node's CPU goes. */
async function profileUntilStopped(dir: string): Promise<void> {
  // Socket writes to the store (not stdout's pipe) and task starts, beside the profile.
  const counts = { writes: 0, bytes: 0, started: 0 };
  const write = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
    if (this.remotePort !== undefined) {
      counts.writes++;
      counts.bytes += (chunk as { length?: number })?.length ?? 0;
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof write;
  const print = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((line: string) => {
    if (line.startsWith('S ')) counts.started++;
    return print(line);
  }) as typeof process.stdout.write;
  process.prependOnceListener('SIGTERM', () => writeFileSync(join(dir, `${env('SYSTEM')}-${process.pid}.counts.json`), JSON.stringify(counts)));
  const session = new Session();
  session.connect();
  if (process.env.PROFILE_HEAP === '1') {
    // Every allocation sampled, the ones collected since too: where a node's garbage comes from.
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
    process.prependOnceListener('SIGTERM', () => {
      void session.post('HeapProfiler.stopSampling').then(({ profile }) => writeFileSync(join(dir, `${env('SYSTEM')}-${process.pid}.heapprofile`), JSON.stringify(profile)));
    });
    return;
  }
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  process.prependOnceListener('SIGTERM', () => {
    void session.post('Profiler.stop').then(({ profile }) => writeFileSync(join(dir, `${env('SYSTEM')}-${process.pid}.cpuprofile`), JSON.stringify(profile)));
  });
}

async function main(): Promise<void> {
  const system = env('SYSTEM');
  // Before every system's OPS line (listeners run in order): the bytes it allocated so far, read beside its round trips.
  const heap = heapAllocations();
  process.on('SIGUSR2', () => say(`HEAP ${heap.bytes()}`));
  if (system === 'bullmq') await bullmq();
  else if (system === 'pg-boss') await pgBoss();
  else if (system === 'graphile-worker') await graphileWorker();
  else if (system === 'bullmq-postgres') await bullmqPostgres();
  else await gatekeeper();
  if (process.env.PROFILE_DIR) await profileUntilStopped(process.env.PROFILE_DIR);
  say('READY');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
