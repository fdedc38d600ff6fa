import type { VersionedEntry } from './permit-store';

/** Options of a single decision. */
export interface DecideOptions {
  /**
   * Allow an answer from this node's view, without a round trip, when that view is young enough (see
   * `PermitEngine`). Default false: every answer is checked against the store.
   */
  local?: boolean;
}

/** Tuning of a `PermitEngine`. */
export interface PermitEngineOptions {
  /** Compare-and-set attempts before a decision gives up with `CONTENTION`. Default 16. */
  maxAttempts?: number;
  /** Bound on how far nodes' clocks may disagree, in ms: permits count as live that much longer. Default 0. */
  clockSkewMs?: number;
  /** Least number of cluster members that must be visible to grant or refresh. Default: no check. */
  quorum?: number;
  /** Most a decision may take when the semaphore's duration does not ask for less (a quarter of it). Default 5000. */
  storeTimeoutMs?: number;
  /**
   * On a local decision, how long a node gives way to the instance that released a free slot with a hold just
   * before (see `givesWayToIncumbents`), waiting for its grant's event instead of racing it with a compare-and-set
   * that would lose. Bounded by a tenth of the semaphore's duration. Default 50; 0 turns it off.
   */
  incumbentHeadStartMs?: number;
  /**
   * Called when a semaphore's entry is absent. Returns true if it put the entry back (a definition this node
   * knows, lost with its partition); the decision is then taken again on the rebuilt entry.
   */
  onMissing?: (semaphore: string, read: VersionedEntry) => Promise<boolean>;
}
