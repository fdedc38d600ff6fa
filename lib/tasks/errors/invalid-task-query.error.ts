import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** An operator's filter or option on tasks is invalid: `field` names it (`state`, `limit`, `olderThan`). */
export class InvalidTaskQueryError extends GatekeeperError {
  constructor(
    /** The field that is wrong. */
    readonly field: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`Task query: invalid ${field}: ${reason}`);
  }
}
