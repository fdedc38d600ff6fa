import { BadRequestException, ConflictException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
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
 * Runs an admin action and turns the library's errors into HTTP answers: 400 naming the field, 404 (unknown
 * semaphore, election, allocation, task, job or schedule), 409 (an edit conflict, a task action or a run now refused,
 * with its reason code), 503 with the reason code the permits' denials use (`STORE_UNAVAILABLE`, `STORE_TIMEOUT`,
 * `QUORUM_NOT_MET`: what the console's banner says). Nothing is stored on error.
 */
export async function answer<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof InvalidScheduleError) {
      throw new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, schedule: error.schedule, field: error.field });
    }
    if (error instanceof UnknownScheduleError) {
      throw new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, schedule: error.schedule, reason: 'UNKNOWN_SCHEDULE' });
    }
    if (error instanceof ScheduleEditConflictError) {
      // REVISION_CONFLICT: the operator's expectedRevision is stale (read again); WRITE_CONFLICT: concurrent writers won every attempt.
      const stale = error.actualRevision !== undefined;
      throw new ConflictException({
        statusCode: 409, error: 'Conflict', message: error.message, schedule: error.schedule, reason: stale ? 'REVISION_CONFLICT' : 'WRITE_CONFLICT',
        ...(stale && { expectedRevision: error.expectedRevision, actualRevision: error.actualRevision }),
      });
    }
    if (error instanceof InvalidDefinitionError) {
      throw new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, semaphore: error.semaphore, field: error.field });
    }
    if (error instanceof UnknownSemaphoreError) throw new NotFoundException(error.message);
    if (error instanceof ElectionNotFoundError) {
      throw new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, election: error.election, elections: error.known });
    }
    if (error instanceof UnknownAllocationError) {
      throw new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, allocation: error.allocation });
    }
    if (error instanceof InvalidTaskQueryError) throw new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, field: error.field });
    if (error instanceof UnknownTaskError) throw new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, task: error.taskId });
    if (error instanceof TaskActionRefusedError) throw new ConflictException({ statusCode: 409, error: 'Conflict', message: error.message, task: error.taskId, action: error.action });
    if (error instanceof InvalidJobRequestError) throw new BadRequestException({ statusCode: 400, error: 'Bad Request', message: error.message, job: error.job, field: error.field });
    if (error instanceof UnknownJobError) throw new NotFoundException({ statusCode: 404, error: 'Not Found', message: error.message, job: error.job, reason: 'UNKNOWN_JOB' });
    if (error instanceof RunNowRefusedError) {
      const body = { message: error.message, job: error.job, reason: error.reason };
      if (error.reason === 'UNKNOWN_JOB') throw new NotFoundException({ statusCode: 404, error: 'Not Found', ...body });
      throw new ConflictException({ statusCode: 409, error: 'Conflict', ...body });
    }
    if (error instanceof EditConflictError) throw new ConflictException(error.message);
    if (error instanceof StoreUnavailableError) {
      const reason = error instanceof StoreTimeoutError ? 'STORE_TIMEOUT' : error instanceof QuorumLostError ? 'QUORUM_NOT_MET' : 'STORE_UNAVAILABLE';
      throw new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', message: error.message, reason });
    }
    throw error;
  }
}
