/*
 * What the tasks rows share: the bench process's submitter of each system (the library's own submit, or BullMQ's
 * `Queue.add` with a job id), submitting with a fixed number in flight, and the environment of every worker process.
 */
import Redis from 'ioredis';
import { Queue } from 'bullmq';
import type { ClientConfig } from 'hazelcast-client';
import { HazelcastConnection } from '../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { PostgresBackend } from '../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../lib/backends/postgres/tasks/postgres-task.store';
import { RedisBackend } from '../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../lib/backends/redis/tasks/redis-task.store';
import type { TaskStore } from '../lib/store/tasks/task-store';
import { systemClock } from '../lib/core/clock';
import { TaskWorker } from '../lib/tasks/task-worker';
import type { CpuParts } from './proc-cpu';
import { preciseNow } from './worker-node';

/** Tasks each worker runs at once, for both systems. */
const CONCURRENCY = 4;
/** Submits in flight at once from the one submitter, for both systems. */
const IN_FLIGHT = 16;
/** The detection row's settings: a 5 s lease and a 1 s scan (gatekeeper); BullMQ keeps its defaults (30 s lock, 30 s stalled check). */
export const DETECTION_SETTINGS = { leaseMs: 5_000, scanMs: 1_000 };

export type Cluster = { clusterName: string; addresses: string[] };
export type System = 'gatekeeper' | 'bullmq';
/** The processes of the bench whose CPU the rows report (worker processes are added per window). */
export type BenchProcesses = Omit<CpuParts, 'workers'>;

/** A submitter: the bench process's own client of each system. */
export interface Submitter {
  submit(type: 'noop' | 'hang', name: string): Promise<void>;
  /** Round trips so far: store calls (gatekeeper) or Redis commands sent, a Lua script counting as one (BullMQ). */
  operations(): Promise<number>;
  close(): Promise<void>;
}

async function gatekeeperSubmitter(config: ClientConfig, mapPrefix: string): Promise<Submitter> {
  const store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: config }), mapPrefix });
  await store.connect();
  const worker = new TaskWorker(store, { instance: 'bench/submitter', acquirer: 'bench' }, { clock: systemClock, clockSkewMs: 500 });
  return {
    submit: async (type, name) => {
      await worker.submit({ type, name });
    },
    operations: async () => store.operationCount(),
    close: () => store.close(),
  };
}

/**
 * The task store of the bench process's gatekeeper-postgres submitter (bench/pg-tasks.ts): every gatekeeper-postgres
 * store the bench builds itself comes from here. The worker processes get theirs from the module, which builds this
 * same store on a PostgresBackend (lib/nest/gatekeeper-stores.factory.ts): both sides must use the same one, or the
 * submits land where the workers never look.
 */
export function postgresTaskStore(url: string, mapPrefix: string): TaskStore {
  return new PostgresTaskStore(new PostgresBackend({ connectionString: url, mapPrefix }));
}

/** The library's own submit on PostgreSQL, as gatekeeperSubmitter on Hazelcast. */
export async function gatekeeperPostgresSubmitter(url: string, mapPrefix: string): Promise<Submitter> {
  const store = postgresTaskStore(url, mapPrefix);
  await store.connect();
  const worker = new TaskWorker(store, { instance: 'bench/submitter', acquirer: 'bench' }, { clock: systemClock, clockSkewMs: 500 });
  return {
    submit: async (type, name) => {
      await worker.submit({ type, name });
    },
    operations: async () => store.operationCount(),
    close: () => store.close(),
  };
}

/**
 * The library's own submit on Redis (the `redis` group, bench/redis-tasks.ts), as gatekeeperSubmitter on Hazelcast:
 * a TaskWorker on the store the module builds on a RedisBackend (lib/nest/gatekeeper-stores.factory.ts), so the
 * submits land where the worker processes look.
 */
export async function gatekeeperRedisSubmitter(url: string, mapPrefix: string): Promise<Submitter> {
  const store = new RedisTaskStore(new RedisBackend({ url, mapPrefix, onWarning: () => undefined }));
  await store.connect();
  const worker = new TaskWorker(store, { instance: 'bench/submitter', acquirer: 'bench' }, { clock: systemClock, clockSkewMs: 500 });
  return {
    submit: async (type, name) => {
      await worker.submit({ type, name });
    },
    operations: async () => store.operationCount(),
    close: () => store.close(),
  };
}

async function bullmqSubmitter(port: number, name = 'bench'): Promise<Submitter> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection });
  // The submitter's own commands, as the nodes count theirs (a Lua script is one round trip).
  let sent = 0;
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof send>) {
    sent++;
    return send.apply(this, args);
  };
  return {
    // The job id makes the add idempotent, as the gatekeeper's id does.
    submit: async (type, name) => {
      await queue.add(type, null, { jobId: `${type}-${name}`, removeOnComplete: { count: 100_000 } });
    },
    operations: async () => sent,
    close: async () => {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      Redis.prototype.sendCommand = send;
    },
  };
}

/** Runs a submit per name with at most `inFlight` at once; returns each id's submit time. */
export async function submitAll(submitter: Submitter, type: 'noop', names: string[], idOf: (name: string) => string, inFlight = IN_FLIGHT): Promise<Map<string, number>> {
  const at = new Map<string, number>();
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < names.length) {
      const name = names[next++];
      at.set(idOf(name), preciseNow());
      await submitter.submit(type, name);
    }
  }));
  return at;
}

/** The environment of every worker process. */
export function workerEnv(cluster: Cluster, mapPrefix: string, redisPort: number | undefined): NodeJS.ProcessEnv {
  return {
    GATEKEEPER_HZ_CLUSTER_NAME: cluster.clusterName,
    GATEKEEPER_HZ_MEMBERS: cluster.addresses.join(','),
    MAP_PREFIX: mapPrefix,
    CONCURRENCY: String(CONCURRENCY),
    SCAN_MS: String(DETECTION_SETTINGS.scanMs),
    HANG_LEASE_MS: String(DETECTION_SETTINGS.leaseMs),
    ...(redisPort !== undefined && { REDIS_PORT: String(redisPort) }),
  };
}

/** The client config of a bench client of `cluster` (Hazelcast's own logging off). */
export const clientConfigOf = (cluster: Cluster): ClientConfig => ({ clusterName: cluster.clusterName, network: { clusterMembers: cluster.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } });

/** Opens the submitter of `system`. */
export function openSubmitter(system: System, cluster: Cluster, mapPrefix: string, redisPort: number | undefined, queue = 'bench'): Promise<Submitter> {
  return system === 'gatekeeper' ? gatekeeperSubmitter(clientConfigOf(cluster), mapPrefix) : bullmqSubmitter(redisPort!, queue);
}
