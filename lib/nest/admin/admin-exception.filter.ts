import { BadRequestException, Catch, ConflictException, NotFoundException, ServiceUnavailableException, type ArgumentsHost, type HttpException } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { EditConflictError } from '../../core/errors/edit-conflict.error';
import { InvalidDefinitionError } from '../../core/errors/invalid-definition.error';
import { QuorumLostError } from '../../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { ElectionNotFoundError } from '../../elections/errors/election-not-found.error';
import { UnknownSemaphoreError } from '../../permits/errors/unknown-semaphore.error';
import { UnknownAllocationError } from '../../allocation/errors/unknown-allocation.error';
import { InvalidTaskQueryError } from '../../tasks/errors/invalid-task-query.error';
import { TaskActionRefusedError } from '../../tasks/errors/task-action-refused.error';
import { UnknownTaskError } from '../../tasks/errors/unknown-task.error';
import { InvalidJobRequestError } from '../../schedules/errors/invalid-job-request.error';
import { RunNowRefusedError } from '../../schedules/errors/run-now-refused.error';
import { UnknownJobError } from '../../schedules/errors/unknown-job.error';
import { InvalidScheduleError } from '../../schedules/errors/invalid-schedule.error';
import { ScheduleEditConflictError } from '../../schedules/errors/schedule-edit-conflict.error';
import { UnknownScheduleError } from '../../schedules/errors/unknown-schedule.error';

/**
 * The admin API's one answer to the library's errors, for every route (a controller-scoped filter): 400 naming the
 * field, 404 (unknown semaphore, election, allocation, task, job or schedule), 409 (an edit conflict, a task action or
 * a run now refused, with its reason code), 503 with the reason code the permits' denials use (`STORE_UNAVAILABLE`,
 * `STORE_TIMEOUT`, `QUORUM_NOT_MET`: what the console's banner says). Anything else goes to Nest's own handling (a
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
  if (error instanceof InvalidScheduleError) {
    return new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, schedule: error.schedule, field: error.field });
  }
  if (error instanceof UnknownScheduleError) {
    return new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, schedule: error.schedule, reason: 'UNKNOWN_SCHEDULE' });
  }
  if (error instanceof ScheduleEditConflictError) {
    // REVISION_CONFLICT: the operator's expectedRevision is stale (read again); WRITE_CONFLICT: concurrent writers won every attempt.
    const stale = error.actualRevision !== undefined;
    return new ConflictException({
      statusCode: 409, error: 'Conflict', message: error.message, schedule: error.schedule, reason: stale ? 'REVISION_CONFLICT' : 'WRITE_CONFLICT',
      ...(stale && { expectedRevision: error.expectedRevision, actualRevision: error.actualRevision }),
    });
  }
  if (error instanceof InvalidDefinitionError) {
    return new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, semaphore: error.semaphore, field: error.field });
  }
  if (error instanceof UnknownSemaphoreError) return new NotFoundException(error.message);
  if (error instanceof ElectionNotFoundError) {
    return new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, election: error.election, elections: error.known });
  }
  if (error instanceof UnknownAllocationError) {
    return new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, allocation: error.allocation });
  }
  if (error instanceof InvalidTaskQueryError) return new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, field: error.field });
  if (error instanceof UnknownTaskError) return new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, task: error.taskId });
  if (error instanceof TaskActionRefusedError) return new ConflictException({ statusCode: 409, error: 'Conflict', message: error.message, task: error.taskId, action: error.action });
  if (error instanceof InvalidJobRequestError) return new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, job: error.job, field: error.field });
  if (error instanceof UnknownJobError) return new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, job: error.job, reason: 'UNKNOWN_JOB' });
  if (error instanceof RunNowRefusedError) {
    const body = { message: error.message, job: error.job, reason: error.reason };
    if (error.reason === 'UNKNOWN_JOB') return new NotFoundException({ statusCode: 404, error: 'Not Found', ...body });
    return new ConflictException({ statusCode: 409, error: 'Conflict', ...body });
  }
  if (error instanceof EditConflictError) return new ConflictException(error.message);
  if (error instanceof StoreUnavailableError) {
    const reason = error instanceof StoreTimeoutError ? 'STORE_TIMEOUT' : error instanceof QuorumLostError ? 'QUORUM_NOT_MET' : 'STORE_UNAVAILABLE';
    return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', message: error.message, reason });
  }
  return undefined;
}
