import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** There is no task of this id (never submitted, or purged). */
export class UnknownTaskError extends GatekeeperError {
  constructor(
    /** The id asked for. */
    readonly taskId: string,
  ) {
    super(`No task ${taskId} (never submitted, or purged after its retention window)`);
  }
}
