import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** An operator's request about a job has a bad field (`limit` of a history, `timeout` of a run now, a body's key). */
export class InvalidJobRequestError extends GatekeeperError {
  constructor(
    /** The job asked about (`Class.method`). */
    readonly job: string,
    /** The field that is wrong, as the caller wrote it. */
    readonly field: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`Job "${job}": invalid ${field}: ${reason}`);
  }
}
