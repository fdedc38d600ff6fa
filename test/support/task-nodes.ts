import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { systemClock } from '../../lib/core/clock';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../../lib/backends/postgres/tasks/postgres-task.store';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../../lib/backends/redis/tasks/redis-task.store';
import { testPostgresUrl } from './test-postgres';
import { testRedisUrl } from './test-redis';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { testClientConfig, uniquePrefix } from './test-cluster';

/** A "cluster" of task stores: memory stores on one backend, or Hazelcast, PostgreSQL or Redis stores (a connection each) on one prefix. */
export const TASK_STORES: Array<[string, () => () => TaskStore]> = [
  ['memory', () => {
    const backend = new MemoryBackend();
    return () => new TaskRecordStore(backend.node());
  }],
  ['a real Hazelcast member', () => {
    const mapPrefix = uniquePrefix('tasks');
    return () => new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
  }],
  // The stores that hand work out one worker at a time (TaskPulls), each node with a backend of its own.
  ['a real PostgreSQL server', () => {
    const mapPrefix = uniquePrefix('tasks');
    return () => new PostgresTaskStore(new PostgresBackend({ connectionString: testPostgresUrl(), mapPrefix, callTimeoutMs: 5_000, onLostData: () => undefined }));
  }],
  ['a real Redis server', () => {
    const mapPrefix = uniquePrefix('tasks');
    return () => new RedisTaskStore(new RedisBackend({ url: testRedisUrl(), mapPrefix, callTimeoutMs: 5_000, onWarning: () => undefined, onLostData: () => undefined }));
  }],
];

/** Options of a test worker (every node in one process, each with a store of its own). */
export type TestWorkerOptions = Partial<ConstructorParameters<typeof TaskWorker>[2]>;

/**
 * Task workers for one test on the cluster `cluster` makes: `worker(name)` starts a node with a store of its own;
 * every worker is stopped and every store closed after each test. Call inside a `describe`.
 */
export function taskNodes(cluster: () => () => TaskStore) {
  let newStore: () => TaskStore;
  const workers: TaskWorker[] = [];
  const stores: TaskStore[] = [];
  beforeEach(() => {
    newStore = cluster();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(100)));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  return {
    stores,
    /** A connected store of the test's cluster, closed after the test. */
    async store(): Promise<TaskStore> {
      const store = newStore();
      await store.connect();
      stores.push(store);
      return store;
    },
    /** A worker on a store of its own (stores[i] is the i-th worker's). */
    async worker(name: string, options: TestWorkerOptions = {}, store?: TaskStore): Promise<TaskWorker> {
      const own = store ?? (await this.store());
      const w = new TaskWorker(own, { instance: `${name}/1`, acquirer: name }, { clock: systemClock, clockSkewMs: 20, scanMs: 100, ...options });
      workers.push(w);
      return w;
    },
  };
}
