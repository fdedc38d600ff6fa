import { GatekeeperError } from '../core/errors/gatekeeper.error';
import type { StoreBackend } from './store-backend';

/** What declaring a store new did (see `declareNewStore`). */
export interface NewStoreReport {
  /** The store, in words: `Hazelcast cluster "dev"`, `PostgreSQL schema "gatekeeper"`, `Redis prefix "gatekeeper"`. */
  readonly store: string;
  /**
   * Whether the store is declared new: `false` when it was in use already (or was found lost), and nothing was
   * written; its semaphores then wait out a recovery as after a loss.
   */
  readonly declared: boolean;
  /** Declared new by an earlier call already, and still showing no use: nothing needed doing. */
  readonly alreadyNew: boolean;
  /** The semaphores whose recovery wait it lifted (nodes that started before it set them waiting), with their map. */
  readonly waitsLifted: ReadonlyArray<{ readonly map: string; readonly semaphore: string }>;
}

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
