import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** `ClusterService.waitForLeader()` saw no leader within its timeout. */
export class LeaderTimeoutError extends GatekeeperError {
  constructor(
    /** The election. */
    readonly election: string,
    /** How long it waited, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`Election "${election}": no leader within ${timeoutMs} ms`);
  }
}
