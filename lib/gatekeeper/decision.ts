import type { DenyReason } from './deny-reason';
import type { Permit, PermitState } from './permit';

/** The permit state to write, without the revision and nonce, which the engine adds when it writes. */
export type NextPermitState = Pick<PermitState, 'lastToken' | 'permits'>;

/** A permit was granted (new fencing token) or refreshed (same token, later expiry). */
export interface GrantDecision {
  /** `granted` for a new permit, `refreshed` for one the acquirer already held. */
  readonly outcome: 'granted' | 'refreshed';
  /** The permit as it will be after the write. */
  readonly permit: Permit;
  /** The state to write. */
  readonly next: NextPermitState;
}

/** The request was denied; `next` is set when the denial also drops a permit the acquirer held. */
export interface DenyDecision {
  /** Always `denied`. */
  readonly outcome: 'denied';
  /** Why. */
  readonly reason: DenyReason;
  /** A human-readable detail for logs. */
  readonly message: string;
  /** The state to write, if the denial changes it (the holder's permit is withdrawn). */
  readonly next?: NextPermitState;
}

/** The outcome of releasing a permit. */
export interface ReleaseDecision {
  /** `released` removed the permit; `shortened` kept it until `lockAtLeastFor` ran out; `not-held` found no such permit. */
  readonly outcome: 'released' | 'shortened' | 'not-held';
  /** The state to write, unless nothing changes. */
  readonly next?: NextPermitState;
}

/** Any decision the rules make about an acquire or refresh. */
export type PermitDecision = GrantDecision | DenyDecision;
