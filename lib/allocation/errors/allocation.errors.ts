import { NotFoundError } from '../../core/errors/not-found.error';

/** An allocation that is neither declared in the module options nor defined in the cluster (with `autoDefine` off). */
export function unknownAllocation(allocation: string): NotFoundError {
  return new NotFoundError(
    'allocation',
    allocation,
    `Unknown allocation "${allocation}": declare it in the module options (allocations: [{ name: '${allocation}' }]) or define allocation:${allocation}`,
  );
}
