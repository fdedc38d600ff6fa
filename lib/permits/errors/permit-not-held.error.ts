import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** A permit was released that this node does not hold (it expired and was taken, was released already, or belongs to another node). */
export class PermitNotHeldError extends GatekeeperError {
  constructor(
    /** The semaphore of the permit. */
    readonly semaphore: string,
    /** The fencing token of the permit the caller tried to release. */
    readonly fencingToken: number,
    /** The acquirer that tried to release it. */
    readonly acquirer: string,
  ) {
    super(`Semaphore "${semaphore}": permit with fencing token ${fencingToken} is not held by "${acquirer}"`);
  }
}
