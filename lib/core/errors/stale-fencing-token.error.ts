import { GatekeeperError } from './gatekeeper.error';

/**
 * A fenced write was refused: a newer holder of the lease already wrote to the resource (`fence()` of
 * `nestjs-gatekeeper/fencing`), so this holder's lease was lost, taken over or ran out while it worked. The
 * transaction it was called in must not commit: let the error propagate so your tool rolls it back (on PostgreSQL the
 * transaction is already failed and a `COMMIT` rolls it back), and stop the work.
 */
export class StaleFencingTokenError extends GatekeeperError {
  constructor(
    /** The resource the write was for. */
    readonly resource: string,
    /** The token this holder offered. */
    readonly token: number,
    /** The newer token the resource has accepted. */
    readonly newer: number,
  ) {
    super(`Fenced write to "${resource}" refused: token ${token} is stale, the resource already accepted token ${newer} from a newer holder`);
  }
}
