import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** An allocation that is neither declared in the module options nor defined in the cluster (with `autoDefine` off). */
export class UnknownAllocationError extends GatekeeperError {
  constructor(
    /** The allocation's name. */
    readonly allocation: string,
  ) {
    super(`Unknown allocation "${allocation}": declare it in the module options (allocations: [{ name: '${allocation}' }]) or define allocation:${allocation}`);
  }
}
