import { GatekeeperError } from './gatekeeper.error';

/**
 * A compare-and-set kept losing to concurrent writes (or ran out of its deadline between attempts) and gave up:
 * nothing was written by the call that throws it. Retry it later.
 */
export class WriteConflictError extends GatekeeperError {
  constructor(
    /** What was being written (`cancel task "t-1"`). */
    readonly what: string,
    /** How many attempts were made. */
    readonly attempts: number,
  ) {
    super(`${what}: not written, it conflicted with concurrent writes ${attempts} times; nothing was changed by this call, retry it`);
  }
}
