import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** No live schedule has this id (never defined, or removed): it cannot be paused or resumed. */
export class UnknownScheduleError extends GatekeeperError {
  constructor(
    /** The id asked for. */
    readonly schedule: string,
  ) {
    super(`No schedule "${schedule}" (never defined, or removed)`);
  }
}
