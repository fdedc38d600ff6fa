import { CorruptStateError } from '../core/errors/corrupt-state.error';
import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { PermitDenied } from './acquire-result';
import { DenyReason } from './deny-reason';
import type { HeldPermits } from './held-permits';
import type { PermitStore } from './permit-store';

/** A denial of `semaphore`. */
export function denied(semaphore: string, reason: DenyReason, message: string): PermitDenied {
  return { granted: false, semaphore, reason, message };
}

/**
 * Fails closed: a store that timed out, cannot be reached, refused for lack of quorum or holds an unreadable value
 * is a denial (`QUORUM_NOT_MET` for a quorum refusal, so a held permit is let go); anything else is rethrown.
 */
export function storeDenial(semaphore: string, error: unknown): PermitDenied {
  if (error instanceof StoreTimeoutError) return denied(semaphore, DenyReason.STORE_TIMEOUT, error.message);
  if (error instanceof QuorumLostError) return denied(semaphore, DenyReason.QUORUM_NOT_MET, error.message);
  if (error instanceof StoreUnavailableError) return denied(semaphore, DenyReason.STORE_UNAVAILABLE, error.message);
  if (error instanceof CorruptStateError) return denied(semaphore, DenyReason.CORRUPT_STATE, error.message);
  throw error;
}

/**
 * How one instance's decisions fail closed: below the quorum of visible members nothing is granted or refreshed, and
 * a store failure is a denial ({@link storeDenial}); either way a permit the instance counted as held is let go now.
 */
export class FailClosed {
  constructor(
    private readonly store: Pick<PermitStore, 'memberCount'>,
    /** Least number of cluster members that must be visible; `undefined`: no check. */
    private readonly quorum: number | undefined,
    private readonly held: HeldPermits,
  ) {}

  /** The denial when fewer members than the quorum are visible, else `undefined`. */
  belowQuorum(semaphore: string): PermitDenied | undefined {
    const members = this.quorum === undefined ? undefined : this.store.memberCount();
    if (members === undefined || this.quorum === undefined || members >= this.quorum) return undefined;
    return denied(semaphore, DenyReason.QUORUM_NOT_MET, `${members} cluster member(s) visible, quorum is ${this.quorum}`);
  }

  /** A decision's refusal below the quorum: this instance no longer counts the permit as held. */
  refusedBelowQuorum(semaphore: string): PermitDenied | undefined {
    const refused = this.belowQuorum(semaphore);
    if (refused) this.held.delete(semaphore);
    return refused;
  }

  /** A store failure as a denial (see {@link storeDenial}); a quorum refusal lets a held permit go now, as below the quorum option. */
  storeFailure(semaphore: string, error: unknown): PermitDenied {
    if (error instanceof QuorumLostError) this.held.delete(semaphore);
    return storeDenial(semaphore, error);
  }
}
