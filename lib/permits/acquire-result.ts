import type { DenyReason } from './deny-reason';
import type { Permit } from './permit';

/** A permit was granted or refreshed. */
export interface PermitGranted {
  /** Always true. */
  readonly granted: true;
  /**
   * `granted`: a new permit (new fencing token). `refreshed`: this node's permit, with a later expiry written.
   * `held`: this node's permit, far enough from expiry that nothing needed writing (no round trip).
   */
  readonly outcome: 'granted' | 'refreshed' | 'held';
  /** The permit, as stored. */
  readonly permit: Permit;
  /**
   * Only on a fresh grant (`outcome: 'granted'`): since when (epoch ms, this node's clock) no permit of the
   * semaphore could vouch for a run, so no run under an earlier permit started after it: instants scheduled between
   * it and the grant were run by nobody (missed runs). It errs late, never early. `undefined` when another permit
   * of the semaphore is still live, or it was never held (nothing was missed).
   */
  readonly vacantSince?: number;
}

/** A permit was denied. Denial is a normal answer, not an error. */
export interface PermitDenied {
  /** Always false. */
  readonly granted: false;
  /** The semaphore that was asked for. */
  readonly semaphore: string;
  /** Why, as a stable code. */
  readonly reason: DenyReason;
  /** Why, for people. */
  readonly message: string;
}

/** The answer to `tryAcquire` or `refresh`. */
export type AcquireResult = PermitGranted | PermitDenied;
