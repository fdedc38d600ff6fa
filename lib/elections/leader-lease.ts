import type { PermitLease } from '../permits/permit-lease';
import { leadershipLost } from './errors/election.errors';

/**
 * This node's leadership of one election, while it lasts: its epoch (the fencing token, larger than every earlier
 * leader's) and a signal that fires when it ends (stepped down, resigned, paused or moved by an operator, or not
 * renewed in time), before any other node can be elected. Check {@link LeaderLease.assertValid} right before each side effect,
 * and pass {@link LeaderLease.epoch} to systems that can reject a stale leader's writes.
 */
export class LeaderLease {
  private readonly controller = new AbortController();

  constructor(
    /** The election. */
    readonly election: string,
    private readonly lease: PermitLease,
  ) {
    const lost = (): void => this.end(reasonOf(lease.signal.reason));
    if (lease.signal.aborted) lost();
    else lease.signal.addEventListener('abort', lost, { once: true });
  }

  /** The fencing token of this leadership: grows with every new leader of the election. */
  get epoch(): number {
    return this.lease.permit.fencingToken;
  }

  /** Fires when this leadership ends; `signal.reason` is a {@link LeaseLostError}. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Until when (this node's clock) the lease vouches for the leadership, unless it ends sooner. */
  get validUntil(): number {
    return this.lease.validUntil;
  }

  /** When this node was elected (epoch ms). */
  get since(): number {
    return this.lease.permit.grantedAt;
  }

  /** Whether this node is still leader as far as it can tell. */
  isValid(): boolean {
    return !this.controller.signal.aborted && this.lease.isValid();
  }

  /** Throws {@link LeaseLostError} unless {@link LeaderLease.isValid}. Call it right before a side effect. */
  assertValid(): void {
    try {
      this.lease.assertValid();
    } catch {
      // the lease's own signal ends this one
    }
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** Ends the leadership for its work (the signal fires); the permit itself is let go by whoever ends it. */
  end(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(leadershipLost(this.election, this.epoch, reason));
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error && 'reason' in error && typeof error.reason === 'string' ? error.reason : String(error);
}
