import { GatekeeperError } from './gatekeeper.error';

/**
 * A semaphore definition, or an option that feeds one, is invalid.
 * `semaphore` and `field` name exactly what to fix; nothing was stored.
 */
export class InvalidDefinitionError extends GatekeeperError {
  constructor(
    /** The semaphore the bad value belongs to (`'<unnamed>'` when the name itself is missing). */
    readonly semaphore: string,
    /** The field that is wrong, e.g. `groupPattern` or `permits`. */
    readonly field: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`Semaphore "${semaphore}": invalid ${field}: ${reason}`);
  }
}
