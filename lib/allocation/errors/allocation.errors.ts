import { NotFoundError } from '../../core/errors/not-found.error';
import { LeaseLostError } from '../../core/errors/lease-lost.error';

/** An allocation that is neither declared in the module options nor defined in the cluster (with `autoDefine` off). */
export function unknownAllocation(allocation: string): NotFoundError {
  return new NotFoundError(
    'allocation',
    allocation,
    `Unknown allocation "${allocation}": declare it in the module options (allocations: [{ name: '${allocation}' }]) or define allocation:${allocation}`,
  );
}

/** This node does not own `resource` of `allocation` (any more): `ResourceLease.assertOwned`. */
export function resourceNotOwned(allocation: string, resource: string, reason: string): LeaseLostError {
  return new LeaseLostError('resource', resource, reason, `Resource "${resource}" of allocation "${allocation}" is not owned by this node: ${reason}`);
}
