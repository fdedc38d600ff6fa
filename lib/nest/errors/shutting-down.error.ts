import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** A call that starts new work (a task submitted, an allocation joined) came after the module began shutting down. */
export class ShuttingDownError extends GatekeeperError {
  constructor(
    /** What was asked, e.g. `Task export` or `Allocation "partitions"`. */
    readonly what: string,
  ) {
    super(`${what}: the module is shutting down`);
  }
}
