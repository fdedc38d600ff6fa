import { InvalidDefinitionError } from '../../core/errors/invalid-definition.error';

/**
 * A schedule definition is invalid: `schedule` (its id, `'<unnamed>'` when the id itself is missing) and `field`
 * name exactly what to fix; nothing was stored. An {@link InvalidDefinitionError}, so code (and the admin API)
 * that catches those answers it the same way.
 */
export class InvalidScheduleError extends InvalidDefinitionError {
  constructor(
    /** The schedule's id as given, `'<unnamed>'` when it has none. */
    readonly schedule: string,
    field: string,
    reason: string,
  ) {
    super(undefined, field, reason);
    this.message = `Schedule "${schedule}": invalid ${field}: ${reason}`;
  }
}
