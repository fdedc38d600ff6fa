import type { DenyReason } from './deny-reason';
import type { Permit } from './permit';
import type { SemaphoreEntry } from './semaphore-entry';

/**
 * The permits to write, without nonce, which the engine adds when it writes. `revision` is set by a grant (its
 * token); otherwise the write takes the read revision plus one. `vacatedAt` is set only by a write that removes
 * permits (release, withdrawal); otherwise the entry's is kept.
 */
export type NextPermits = Pick<SemaphoreEntry, 'lastToken' | 'permits' | 'vacatedAt'> & { readonly revision?: number };

/** A permit was granted (new fencing token) or refreshed (same token, later expiry). */
export interface GrantDecision {
  /** `granted` for a new permit, `refreshed` for one the holder already had. */
  readonly outcome: 'granted' | 'refreshed';
  /** The permit as it will be after the write. */
  readonly permit: Permit;
  /** What to write. */
  readonly next: NextPermits;
  /**
   * Only on `granted`: since when no permit of the semaphore could vouch for a run (epoch ms, this node's clock),
   * or `undefined` when another permit is live or the semaphore was never held (see `vacantSince`).
   */
  readonly vacantSince?: number;
}

/** The request was denied; `next` is set when the denial also drops a permit the holder had. */
export interface DenyDecision {
  /** Always `denied`. */
  readonly outcome: 'denied';
  /** Why. */
  readonly reason: DenyReason;
  /** A human-readable detail for logs. */
  readonly message: string;
  /** What to write, if the denial changes the permits (the holder's own permit is withdrawn). */
  readonly next?: NextPermits;
  /** The holder's own permit that `next` withdraws: its running work must be told before the write. */
  readonly withdrawn?: Permit;
}

/** The outcome of releasing a permit. */
export interface ReleaseDecision {
  /** `released` removed the permit; `shortened` keeps it (never refreshed again) until `lockAtLeastFor` ran out; `not-held` found no such permit. */
  readonly outcome: 'released' | 'shortened' | 'not-held';
  /** What to write, unless nothing changes. */
  readonly next?: NextPermits;
}

/** The outcome of an operator revoking permits (force-release, reset). */
export interface RevokeDecision {
  /** `revoked`: the permits are marked, their holders are told; `not-held`: nothing live to revoke. */
  readonly outcome: 'revoked' | 'not-held';
  /** The permits revoked. */
  readonly revoked: readonly Permit[];
  /** What to write, unless nothing changes. */
  readonly next?: NextPermits;
}

/** Any decision the rules make about an acquire or refresh. */
export type PermitDecision = GrantDecision | DenyDecision;
