import { InvalidInputError } from '../../core/errors/invalid-input.error';
import { NotFoundError } from '../../core/errors/not-found.error';

/** No live schedule has this id (never defined, or removed): it cannot be paused or resumed. */
export function unknownSchedule(schedule: string): NotFoundError {
  return new NotFoundError('schedule', schedule, `No schedule "${schedule}" (never defined, or removed)`);
}

/** A bad field of a schedule definition: `schedule` its id, `'<unnamed>'` when the id itself is missing. */
export function invalidSchedule(schedule: string, field: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Schedule "${schedule}": invalid ${field}: ${reason}`, { of: `Schedule "${schedule}"`, field, reason, kind: 'schedule', id: schedule });
}
