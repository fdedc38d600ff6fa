/**
 * What a capability tells a declaration that a store is new ({@link StoreBackend.declareNew}) about one record map it
 * keeps: how a stored value shows that the store held state before, and how to lift the recovery wait a node set on
 * a value it created not knowing the store was new. A backend that keeps such waits (Hazelcast) reads the map under
 * every map prefix with these rules; it knows nothing of what the values mean. The permits' semaphores are the one map
 * that needs it (`lib/permits/semaphore-new-store.ts`).
 */
export interface NewStoreRules {
  /** The record map, by its name after the map prefix: `semaphores`. */
  readonly map: string;
  /** What one record of it is, in words: `semaphore`. */
  readonly noun: string;
  /** The record map that notes, by key, when a record of `map` was first written (`semaphore-keys`). */
  readonly notes: string;
  /** The sign in a stored value that the store held state before (where, and what was found, in words), or undefined. `where` names the record. */
  earlierLife(where: string, key: string, raw: string): { readonly where: string; readonly reason: string } | undefined;
  /** The sign in a note of `key` (and its record now: `null` when it has none) that the store held state before, or undefined. */
  notedEarlier(where: string, key: string, note: string, raw: string | null): { readonly where: string; readonly reason: string } | undefined;
  /**
   * The value with its recovery wait lifted, and when that wait would have ended; undefined when it has none to lift
   * or shows an earlier life (its wait then stays).
   */
  lifted(key: string, raw: string): { readonly value: string; readonly waitedUntil?: number } | undefined;
}
