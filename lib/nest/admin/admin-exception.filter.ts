import { BadRequestException, Catch, ConflictException, NotFoundException, ServiceUnavailableException, type ArgumentsHost, type HttpException } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { EditConflictError } from '../../core/errors/edit-conflict.error';
import { QuorumLostError } from '../../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { TaskActionRefusedError } from '../../tasks/errors/task-action-refused.error';
import { RunNowRefusedError } from '../../schedules/errors/run-now-refused.error';
import { InvalidInputError } from '../../core/errors/invalid-input.error';
import { NotFoundError } from '../../core/errors/not-found.error';

/**
 * The admin API's one answer to the library's errors, for every route (a controller-scoped filter): 400 naming the
 * field, 404 (an unknown semaphore, election, allocation, task, job or schedule, with `reason` `UNKNOWN_<KIND>`), 409
 * (an edit conflict, a task action or a run now refused, with its reason code), 503 with the reason code the permits'
 * denials use (`STORE_UNAVAILABLE`, `STORE_TIMEOUT`, `QUORUM_NOT_MET`: what the console's banner says). An error about
 * a named thing names it by its kind: `{ "schedule": "nightly" }`. Anything else goes to Nest's own handling (a
 * guard's 401 and 403 as they are, an unexpected error as a 500). Nothing is stored on error.
 */
@Catch()
export class AdminExceptionFilter extends BaseExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    super.catch(adminHttpError(exception) ?? exception, host);
  }
}

/** The HTTP answer to one of the library's errors, or `undefined` for an error that is not one of them. */
export function adminHttpError(error: unknown): HttpException | undefined {
  const message = error instanceof Error ? error.message : '';
  const named = (kind: string | undefined, id: string | undefined) => (kind === undefined ? {} : { [kind]: id });
  if (error instanceof InvalidInputError) {
    return new BadRequestException({ statusCode: 400, error: 'Bad Request', message, ...named(error.kind, error.id), field: error.field });
  }
  if (error instanceof NotFoundError) {
    return new NotFoundException({
      statusCode: 404, error: 'Not Found', message, ...named(error.kind, error.id), reason: `UNKNOWN_${error.kind.toUpperCase()}`,
      ...(error.kind === 'election' && error.known && { elections: error.known }),
    });
  }
  if (error instanceof EditConflictError) {
    // REVISION_CONFLICT: the operator's expectedRevision is stale (read again); WRITE_CONFLICT: concurrent writers won every attempt.
    const stale = error.actualRevision !== undefined;
    return new ConflictException({
      statusCode: 409, error: 'Conflict', message, ...named(error.kind, error.id), reason: stale ? 'REVISION_CONFLICT' : 'WRITE_CONFLICT',
      ...(stale && { expectedRevision: error.expectedRevision, actualRevision: error.actualRevision }),
    });
  }
  if (error instanceof TaskActionRefusedError) return new ConflictException({ statusCode: 409, error: 'Conflict', message, task: error.taskId, action: error.action });
  if (error instanceof RunNowRefusedError) {
    const body = { message, job: error.job, reason: error.reason };
    if (error.reason === 'UNKNOWN_JOB') return new NotFoundException({ statusCode: 404, error: 'Not Found', ...body });
    return new ConflictException({ statusCode: 409, error: 'Conflict', ...body });
  }
  if (error instanceof StoreUnavailableError) {
    const reason = error instanceof StoreTimeoutError ? 'STORE_TIMEOUT' : error instanceof QuorumLostError ? 'QUORUM_NOT_MET' : 'STORE_UNAVAILABLE';
    return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', message, reason });
  }
  return undefined;
}
