import type { Clock } from '../core/clock';
import { HazelcastBackend } from '../backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import type { HazelcastStoreOptions } from '../backends/hazelcast/permits/hazelcast-permit.store';
import { HazelcastTaskStore } from '../backends/hazelcast/tasks/hazelcast-task.store';
import type { StoreBackend } from '../store/store-backend';
import { storeCallsOf } from '../store/store-call-observers';
import type { TaskStore } from '../tasks/task-store';

/*
 * The Hazelcast half of the module's backends, in a module of its own that the store factory loads only when a
 * capability is on Hazelcast: `hazelcast-client` is then needed only by applications that use it.
 */

/** The process's one Hazelcast connection, from the module's Hazelcast options. */
export function hazelcastConnection(options: HazelcastStoreOptions): HazelcastConnection {
  return new HazelcastConnection(options);
}

/** The backend every capability on `'hazelcast'` shares, on that connection. */
export function hazelcastBackend(connection: HazelcastConnection, options: { mapPrefix?: string; callTimeoutMs?: number; clock: Clock }): HazelcastBackend {
  return new HazelcastBackend({ connection, ...options });
}

/** The native task store of a Hazelcast backend (member-side claim queries, a filtered listener); none for another backend. */
export function nativeTaskStore(backend: StoreBackend, callTimeoutMs?: number): TaskStore | undefined {
  if (!(backend instanceof HazelcastBackend)) return undefined;
  return new HazelcastTaskStore({ connection: backend.connection, mapPrefix: backend.mapPrefix, callTimeoutMs, observers: storeCallsOf(backend) });
}
