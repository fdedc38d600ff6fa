/** Who is asking: a node's identity as configured in the module options. */
export interface NodeIdentity {
  /** Zone, site or environment, e.g. `production`, `dr-site`. */
  readonly group: string;
  /** This node's name, e.g. a host, pod or `app-3001`. Unique per running instance. */
  readonly acquirer: string;
}

/** A granted permit: one of a semaphore's permits, held by one acquirer until `expiresAt` unless refreshed. */
export interface Permit {
  /** The semaphore this permit belongs to. */
  readonly semaphore: string;
  /** The holder's acquirer name. */
  readonly acquirer: string;
  /** The holder's group. */
  readonly group: string;
  /**
   * Grows with every new grant of this semaphore, so a downstream system that remembers the highest token it
   * has seen can reject writes from a stale holder. Refreshing keeps the token.
   */
  readonly fencingToken: number;
  /** When this permit was first granted (epoch ms). */
  readonly grantedAt: number;
  /** When it was last granted or refreshed (epoch ms). */
  readonly refreshedAt: number;
  /** When it lapses unless refreshed (epoch ms). */
  readonly expiresAt: number;
}

/** The state of one semaphore's permits, as kept in the store under the semaphore's name. */
export interface PermitState {
  /** Bumped on every write, so two states that hold the same permits still differ byte for byte. */
  readonly revision: number;
  /** The highest fencing token ever granted for this semaphore. */
  readonly lastToken: number;
  /** A nonce unique to the write that produced this state; settles writes whose outcome was unknown. */
  readonly writeId: string;
  /** Permits as last written; some may have expired since. */
  readonly permits: readonly Permit[];
}

/** The state a semaphore starts from before anything was written. Tokens start at the clock's milliseconds so
 * that they keep growing across a full cluster restart that loses the stored counter. */
export function initialPermitState(now: number): PermitState {
  return { revision: 0, lastToken: Math.floor(now), writeId: '', permits: [] };
}

/** The permits in `state` that are still live at `now`, oldest grant first. */
export function livePermits(state: PermitState, now: number): Permit[] {
  return state.permits.filter((p) => p.expiresAt > now).sort((a, b) => a.fencingToken - b.fencingToken);
}
