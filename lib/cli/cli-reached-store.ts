import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import type { PermitRecordStore } from '../permits/permit-record.store';
import type { StoreBackend } from '../store/store-backend';
import type { TaskStore } from '../store/tasks/task-store';

/** How the CLI reaches the cluster (flags, else environment, else a local default), validated. */
export interface CliConnectionOptions {
  /** Where the state is: a Hazelcast cluster (`members`, `clusterName`), PostgreSQL (`postgresUrl`) or Redis (`redisUrl`). */
  backend: 'hazelcast' | 'postgres' | 'redis';
  /** The PostgreSQL connection string (with `backend: 'postgres'`). */
  postgresUrl?: string;
  /** The schema of the library's tables (with `backend: 'postgres'`): the module's `postgres.schema`. */
  postgresSchema?: string;
  /** The Redis URL (with `backend: 'redis'`). */
  redisUrl?: string;
  /** Member addresses, `host` or `host:port`. */
  members: string[];
  /** The Hazelcast cluster name. */
  clusterName: string;
  /** The module's `postgres.mapPrefix`, `redis.mapPrefix` or `hazelcast.mapPrefix`. */
  mapPrefix: string;
  /** Give up connecting after this many ms. */
  connectTimeout: number;
}

/** The stores' backend and how to say it cannot be reached, per store. */
export interface ReachedStore {
  store: PermitRecordStore;
  backend: StoreBackend;
  /** The Hazelcast connection, for what works on a cluster as a whole. */
  connection?: HazelcastConnection;
  tasks(): TaskStore;
  unreachable: string;
  hint: string;
}
