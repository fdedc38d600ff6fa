/** Who is asking: a node's identity as configured in the module options. */
export interface NodeIdentity {
  /** Zone, site or environment, e.g. `production`, `dr-site`. */
  readonly group: string;
  /** This node's name, e.g. a host, pod or `app-3001`: what acquirer patterns match and people read. */
  readonly acquirer: string;
}

/**
 * A holder as the rules see it: the node's identity plus the id of this running instance. Ownership belongs to
 * the instance, never to the acquirer name, so two processes that share a name never share a permit.
 */
export interface Holder extends NodeIdentity {
  /** Unique per running instance of the module (per process, and per application context in one process). */
  readonly instance: string;
}

/** A granted permit: one of a semaphore's permits, held by one instance until `expiresAt` unless refreshed. */
export interface Permit {
  /** The semaphore this permit belongs to. */
  readonly semaphore: string;
  /** The holder's acquirer name. */
  readonly acquirer: string;
  /** The holder's group. */
  readonly group: string;
  /** The id of the holding instance (see `Holder.instance`). */
  readonly instance: string;
  /**
   * Grows with every new grant of this semaphore, across resets, restarts and data loss, so a downstream system
   * that remembers the highest token it has seen can reject writes from a stale holder. Refreshing keeps it.
   */
  readonly fencingToken: number;
  /** When this permit was first granted (epoch ms, granting node's clock). */
  readonly grantedAt: number;
  /** When it was last granted or refreshed (epoch ms). */
  readonly refreshedAt: number;
  /** When it lapses unless refreshed (epoch ms). */
  readonly expiresAt: number;
  /**
   * Set when an operator took it away (force-release, reset). The holder is told and removes it; until then,
   * or until it expires, it still occupies its slot, so nobody else is granted while the holder may still act.
   */
  readonly revokedAt?: number;
  /** Set when the holder released it but kept it until `lockAtLeastFor`: it is never refreshed again. */
  readonly released?: boolean;
  /**
   * Resources this permit holds (allocations), each with its epoch: the revision of the write that gave it to this
   * permit, so a resource's epoch grows with every new owner. While this permit is live no other permit is given a
   * resource listed here; a released permit keeps its resources reserved for its acquirer until it lapses.
   */
  readonly resources?: Readonly<Record<string, number>>;
}
