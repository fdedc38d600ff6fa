import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** Thrown by `renewLease()` (and any fenced write) once this node no longer holds the task: stop at once. */
export class LeaseExpiredError extends GatekeeperError {
  constructor(
    /** The task. */
    readonly taskId: string,
    /** The epoch of the claim that was lost. */
    readonly epoch: number,
    /** Why. */
    readonly reason: string,
  ) {
    super(`Lease of task ${taskId} (epoch ${epoch}) is lost: ${reason}`);
  }
}
