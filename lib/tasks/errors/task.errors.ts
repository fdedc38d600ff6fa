import { InvalidInputError } from '../../core/errors/invalid-input.error';
import { NotFoundError } from '../../core/errors/not-found.error';

/** There is no task of this id (never submitted, or purged). */
export function unknownTask(taskId: string): NotFoundError {
  return new NotFoundError('task', taskId, `No task ${taskId} (never submitted, or purged after its retention window)`);
}

/** An operator's filter or option on tasks is invalid: `field` names it (`state`, `limit`, `olderThan`). */
export function invalidTaskQuery(field: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Task query: invalid ${field}: ${reason}`, { of: 'Task query', field, reason });
}
