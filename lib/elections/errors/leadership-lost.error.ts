import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** Thrown by `LeaderLease.assertValid()` (and the lease signal's reason) once this node is no longer leader. */
export class LeadershipLostError extends GatekeeperError {
  constructor(
    /** The election. */
    readonly election: string,
    /** The epoch of the leadership that ended. */
    readonly epoch: number,
    /** Why it ended. */
    readonly reason: string,
  ) {
    super(`Leadership of "${election}" (epoch ${epoch}) is lost: ${reason}`);
  }
}
