import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** Thrown by `AllocationLease.assertOwned` when this node does not own the resource (any more). */
export class ResourceNotOwnedError extends GatekeeperError {
  constructor(
    /** The allocation. */
    readonly allocation: string,
    /** The resource. */
    readonly resource: string,
    /** Why. */
    readonly reason: string,
  ) {
    super(`Resource "${resource}" of allocation "${allocation}" is not owned by this node: ${reason}`);
  }
}
