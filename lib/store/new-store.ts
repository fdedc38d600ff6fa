import { GatekeeperError } from '../core/errors/gatekeeper.error';
import type { NewStoreReport } from './new-store-report';
import type { StoreBackend } from './store-backend';

/**
 * Declares a store that never held the library's state new, so its first grants need no recovery wait (a store
 * found without the library's state looks exactly like one that lost it, and is otherwise waited out): on Hazelcast,
 * the cluster's partitions (refused with `ClusterNotNewError`, writing nothing, when it shows an earlier life); on
 * PostgreSQL, the schema, created now (a schema that existed is in use); on Redis, the map prefix (refused once a
 * node used it). Only for whoever knows nothing was ever granted there (a new deployment, before or just after its
 * first node): on a store that held permits, it would cut the wait that keeps two holders apart. Needs no open
 * backend. What `nestjs-gatekeeper store init` runs.
 */
export async function declareNewStore(backend: StoreBackend): Promise<NewStoreReport> {
  if (!backend.declareNew) throw new GatekeeperError(`the ${backend.kind} backend has no state to declare new`);
  return backend.declareNew();
}
