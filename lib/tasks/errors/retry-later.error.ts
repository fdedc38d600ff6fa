import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** Thrown by a handler: try again later (after `delayMs`, or the backoff), using up one attempt. */
export class RetryLaterError extends GatekeeperError {
  constructor(
    message: string,
    /** How long to wait before the next attempt; the backoff when absent. */
    readonly delayMs?: number,
  ) {
    super(message);
  }
}
