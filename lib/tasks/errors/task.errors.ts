import { InvalidInputError } from '../../core/errors/invalid-input.error';
import { NotFoundError } from '../../core/errors/not-found.error';
import { LeaseLostError } from '../../core/errors/lease-lost.error';

/** There is no task of this id (never submitted, or purged). */
export function unknownTask(taskId: string): NotFoundError {
  return new NotFoundError('task', taskId, `No task ${taskId} (never submitted, or purged after its retention window)`);
}

/** An operator's filter or option on tasks is invalid: `field` names it (`state`, `limit`, `olderThan`). */
export function invalidTaskQuery(field: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Task query: invalid ${field}: ${reason}`, { of: 'Task query', field, reason });
}

/** This node no longer holds the task (`renewLease()`, any fenced write): stop at once. */
export function leaseExpired(taskId: string, epoch: number, reason: string): LeaseLostError {
  return new LeaseLostError('task', taskId, reason, `Lease of task ${taskId} (epoch ${epoch}) is lost: ${reason}`, epoch);
}
