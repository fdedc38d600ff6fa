import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** Thrown by `PermitLease.assertValid` once the permit can no longer be vouched for. */
export class PermitLostError extends GatekeeperError {
  constructor(
    /** The semaphore whose permit was lost. */
    readonly semaphore: string,
    /** Why. */
    readonly reason: string,
  ) {
    super(`Permit of "${semaphore}" is lost: ${reason}`);
  }
}
