import type { DenyReason } from '../gatekeeper/deny-reason';
import type { Permit } from '../gatekeeper/permit';

/** A permit was granted or refreshed. */
export interface PermitGranted {
  /** Always true. */
  readonly granted: true;
  /** `granted` for a new permit (new fencing token), `refreshed` for one this node already held. */
  readonly outcome: 'granted' | 'refreshed';
  /** The permit, as stored. */
  readonly permit: Permit;
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
