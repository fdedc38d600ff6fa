import { GatekeeperError } from './gatekeeper.error';

/**
 * A semaphore definition, an option or a request field is invalid.
 * `semaphore` (when the value belongs to one) and `field` name exactly what to fix; nothing was stored.
 */
export class InvalidDefinitionError extends GatekeeperError {
  constructor(
    /**
     * The semaphore the bad value belongs to (`'<unnamed>'` when the name itself is missing); `undefined` when it
     * belongs to no semaphore (a module option, a migration request).
     */
    readonly semaphore: string | undefined,
    /** The field that is wrong, e.g. `groupPattern` or `permits`, as the caller wrote it. */
    readonly field: string,
    /** What is wrong with it. */
    readonly reason: string,
    /** What `field` is part of when no semaphore is, for the message: `'migration'` reads `Invalid migration.toGroup: ...`. */
    scope?: string,
  ) {
    super(semaphore !== undefined ? `Semaphore "${semaphore}": invalid ${field}: ${reason}` : `Invalid ${scope ? `${scope}.` : ''}${field}: ${reason}`);
  }
}
