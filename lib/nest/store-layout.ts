import { HazelcastBackend } from '../backends/hazelcast/hazelcast-backend';
import { PostgresBackend } from '../backends/postgres/postgres-backend';
import { RedisBackend } from '../backends/redis/redis-backend';
import { CAPABILITY_STATES, type CapabilityState } from '../core/capability-state';
import type { StoreLayout, StorePlace } from '../presence/store-place';
import type { StoreBackend } from '../store/store-backend';

/** Where `backend` keeps what is put on it, as a node announces it: its kind, address (no password) and scope. */
export function placeOf(backend: StoreBackend): StorePlace {
  const address = backend.describe?.().address;
  if (backend instanceof PostgresBackend) return { kind: 'postgres', ...(address !== undefined && { address }), schema: backend.schema, prefix: backend.mapPrefix };
  if (backend instanceof RedisBackend) return { kind: 'redis', ...(address !== undefined && { address }), prefix: backend.mapPrefix };
  if (backend instanceof HazelcastBackend) return { kind: 'hazelcast', prefix: backend.mapPrefix };
  return { kind: backend.kind, ...(address !== undefined && { address }) };
}

/** The layout of a module's backends: each capability's place. */
export function layoutOf(of: Readonly<Record<CapabilityState, StoreBackend>>): StoreLayout {
  return Object.fromEntries(CAPABILITY_STATES.map((capability) => [capability, placeOf(of[capability])])) as Record<CapabilityState, StorePlace>;
}
