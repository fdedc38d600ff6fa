import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { z } from 'zod';
import { onlyKeys } from '../../core/input-fields';
import { AdminExceptionFilter } from './admin-exception.filter';
import { SchemaPipe } from './schema.pipe';
import type { TaskRecord } from '../../store/tasks/task';
import type { TaskGroupStatus, TaskStateCounts } from '../../tasks/task-admin';
import { parseTaskList, parseTaskPurge, type TaskPurgeInput } from '../../tasks/task-admin.input';
import { TaskService } from '../tasks/task.service';
import { invalidTaskQuery, unknownTask } from '../../tasks/errors/task.errors';

/** A purge body: nothing, or an object of these keys only (their values are {@link parseTaskPurge}'s to check). */
const PURGE_BODY = onlyKeys(['types', 'states', 'olderThan'], (issue) =>
  issue.code === 'unrecognized_keys' ? 'is not a purge option (types, states, olderThan)' : 'must be an object { types?, states?, olderThan? }',
).nullish();
type PurgeBody = z.output<typeof PURGE_BODY>;

/**
 * Builds the admin controller of distributed tasks, under the same prefix and guard as the other admin routes:
 * counts, listings, one task with its attempts, retry, cancel, purge and group progress, read from the cluster.
 * Task ids hold `:` and `#`: encode them in the path (`encodeURIComponent`).
 */
export function createTaskAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class TaskAdminController {
    constructor(private readonly tasks: TaskService) {}

    /** Tasks by type and state. */
    @Get('tasks')
    async counts(): Promise<{ counts: Record<string, TaskStateCounts> }> {
      return ({ counts: await this.tasks.counts() });
    }

    /** Tasks in claim order, filtered by `type`, `state` (comma-separated) and `group`; at most `limit` (default 100). */
    @Get('tasks/list')
    list(@Query() query: Record<string, string | undefined>): Promise<TaskRecord[]> {
      const { query: filter, limit } = parseTaskList({ types: query.type, states: query.state, group: query.group, limit: query.limit });
      return this.tasks.list(filter, limit);
    }

    /**
     * Removes finished tasks now: body `{ types?, states?, olderThan? }`. Any other shape or key is a 400: a purge
     * whose filter was misspelt (`olderThanMs`) must not widen to every finished task.
     */
    @Post('tasks/purge')
    @HttpCode(200)
    async purge(@Body(new SchemaPipe(PURGE_BODY, (field, reason) => invalidTaskQuery(field, reason))) body: PurgeBody): Promise<{ purged: number }> {
      // The pipe checked the keys; parseTaskPurge checks their values, as it does the CLI's.
      return ({ purged: await this.tasks.purge(parseTaskPurge((body ?? {}) as TaskPurgeInput)) });
    }

    /** A group's progress; 404 if neither its record nor any of its tasks exists. */
    @Get('tasks/groups/:type/:name')
    async group(@Param('type') type: string, @Param('name') name: string): Promise<TaskGroupStatus> {
      const status = await this.tasks.group(type, name);
      if (!status) throw unknownTask(`${type}:${name} (a group)`);
      return status;
    }

    /** One task with its claim and every attempt (who, epoch, outcome, error); 404 if there is none. */
    @Get('tasks/:id')
    async one(@Param('id') id: string): Promise<TaskRecord> {
      const task = await this.tasks.get(id);
      if (!task) throw unknownTask(id);
      return task;
    }

    /** Runs a failed, invalid or cancelled task again; 409 naming why for any other. */
    @Post('tasks/:id/retry')
    @HttpCode(200)
    retry(@Param('id') id: string): Promise<TaskRecord> {
      return this.tasks.retry(id);
    }

    /** Cancels a pending or running task; 409 if it finished already. */
    @Post('tasks/:id/cancel')
    @HttpCode(200)
    cancel(@Param('id') id: string): Promise<TaskRecord> {
      return this.tasks.cancel(id);
    }
  }
  return TaskAdminController;
}
