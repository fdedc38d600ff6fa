import type { DenyReason } from './deny-reason';
import type { Permit } from './permit';

/**
 * The answer to `tryAcquire` or `refresh`: granted (`granted: true`, with the permit) or denied (`granted: false`,
 * with the reason). Denial is a normal answer, not an error.
 */
export type AcquireResult =
  | {
      /** A permit was granted or refreshed. */
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
       * semaphore could vouch for a run, so no run under an earlier permit started after it: instants scheduled
       * between it and the grant were run by nobody (missed runs). It errs late, never early. `undefined` when another
       * permit of the semaphore is still live, or it was never held (nothing was missed).
       */
      readonly vacantSince?: number;
    }
  | {
      /** A permit was denied. */
      readonly granted: false;
      /** The semaphore that was asked for. */
      readonly semaphore: string;
      /** Why, as a stable code. */
      readonly reason: DenyReason;
      /** Why, for people. */
      readonly message: string;
    };

/** A granted {@link AcquireResult}. */
export type PermitGranted = Extract<AcquireResult, { granted: true }>;
/** A denied {@link AcquireResult}. */
export type PermitDenied = Extract<AcquireResult, { granted: false }>;
