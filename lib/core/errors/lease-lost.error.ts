import { GatekeeperError } from './gatekeeper.error';

/**
 * A lease this node held can no longer vouch for its work: a permit (`PermitLease.assertValid()` and its signal), a
 * leadership (`LeaderLease.assertValid()`), a task claim (`TaskContext.renewLease()` and any fenced write) or a
 * resource of an allocation (`ResourceLease.assertOwned()`). Stop the work at once: another node may hold it now.
 */
export class LeaseLostError extends GatekeeperError {
  constructor(
    /** What kind of lease was lost. */
    readonly kind: 'permit' | 'leadership' | 'task' | 'resource',
    /** What it was a lease of: the semaphore, the election, the task's id or the resource. */
    readonly id: string,
    /** Why it was lost. */
    readonly reason: string,
    /** What was lost and why, naming it. */
    message: string,
    /** The lost leadership's or task claim's epoch (its fencing token), for those. */
    readonly epoch?: number,
  ) {
    super(message);
  }
}
