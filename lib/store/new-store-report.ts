/** What declaring a store new did (see `StoreBackend.declareNew`). */
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
