import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/**
 * A move of permits between stores (`nestjs-gatekeeper store move`) refused, or an edit aimed at a store the
 * semaphore moved away from: the message names the semaphore, both stores and what to do.
 */
export class SemaphoreMoveRefusedError extends GatekeeperError {}
