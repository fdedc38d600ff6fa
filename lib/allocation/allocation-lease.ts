import type { PermitLease } from '../permits/permit-lease';
import { resourceNotOwned } from './errors/allocation.errors';

/** What `onAssigned` gets: the resources this node owns in one allocation, with their epochs and a signal. */
export interface ResourceLease {
  /** The allocation. */
  readonly allocation: string;
  /** Fires when this node's part ends as a whole. */
  readonly signal: AbortSignal;
  /** The resources this node owns now, sorted. */
  resources(): string[];
  /** Whether this node owns `resource` now. */
  owns(resource: string): boolean;
  /** The epoch of this node's ownership of `resource` (0 in manual mode), or `undefined` when it does not own it. */
  epochOf(resource: string): number | undefined;
  /** Throws {@link LeaseLostError} unless this node owns `resource` now. */
  assertOwned(resource: string): void;
}

/**
 * This node's part in one allocation while it lasts: the resources it owns, each with its epoch (grows with every
 * new owner of that resource, so a store that remembers the highest epoch it saw per resource rejects a stale
 * owner's writes), and a signal that fires when the node loses all of them at once (its lease not renewed in time,
 * revoked, paused or excluded by an operator, its data lost). A resource taken away alone is announced by
 * `onRevoked` before it moves. Check {@link assertOwned} right before each side effect on a resource.
 */
export class AllocationLease implements ResourceLease {
  private readonly owned = new Map<string, number>();

  constructor(
    /** The allocation. */
    readonly allocation: string,
    private readonly lease: PermitLease,
  ) {}

  /** Fires when this node's part ends as a whole; `signal.reason` says why. */
  get signal(): AbortSignal {
    return this.lease.signal;
  }

  /** Until when (this node's clock) the lease vouches, unless it ends sooner. */
  get validUntil(): number {
    return this.lease.validUntil;
  }

  /** The fencing token of this node's part (its permit): grows with every node that joins. */
  get token(): number {
    return this.lease.permit.fencingToken;
  }

  /** The resources this node owns now, sorted. */
  resources(): string[] {
    return this.lease.isValid() ? [...this.owned.keys()].sort() : [];
  }

  /** Whether this node owns `resource` now (and its lease still vouches). */
  owns(resource: string): boolean {
    return this.owned.has(resource) && this.lease.isValid();
  }

  /** The epoch of this node's ownership of `resource`, or `undefined` when it does not own it. */
  epochOf(resource: string): number | undefined {
    return this.owns(resource) ? this.owned.get(resource) : undefined;
  }

  /** Throws {@link LeaseLostError} unless this node owns `resource` now. Call it right before a side effect. */
  assertOwned(resource: string): void {
    if (!this.owns(resource)) {
      const why = this.lease.signal.aborted ? String((this.lease.signal.reason as Error)?.message ?? this.lease.signal.reason) : 'revoked or never assigned here';
      throw resourceNotOwned(this.allocation, resource, why);
    }
  }

  /** @internal Records resources given to this node. */
  add(resources: ReadonlyMap<string, number>): void {
    for (const [id, epoch] of resources) this.owned.set(id, epoch);
  }

  /** @internal Forgets resources before they are revoked, so `owns` turns false before `onRevoked` runs. */
  remove(resources: readonly string[]): void {
    for (const id of resources) this.owned.delete(id);
  }

  /** @internal Everything this node still counts as its own (also after the signal). */
  held(): string[] {
    return [...this.owned.keys()].sort();
  }
}
