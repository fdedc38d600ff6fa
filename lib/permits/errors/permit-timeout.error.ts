import { GatekeeperError } from '../../core/errors/gatekeeper.error';
import type { DenyReason } from '../deny-reason';

/** `acquire()` gave up: no permit was granted before its timeout. */
export class PermitTimeoutError extends GatekeeperError {
  constructor(
    /** The semaphore that was asked for. */
    readonly semaphore: string,
    /** How long the caller waited, in milliseconds. */
    readonly timeoutMs: number,
    /** Why the last attempt was denied. */
    readonly lastReason: DenyReason,
  ) {
    super(`Semaphore "${semaphore}": no permit within ${timeoutMs} ms (last denial: ${lastReason})`);
  }
}
