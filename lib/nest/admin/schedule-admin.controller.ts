import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { AdminExceptionFilter } from './admin-exception.filter';
import type { ScheduleChangeResult } from '../../schedules/schedule-catalog';
import type { ScheduleOverview } from '../../schedules/schedule-overview';
import { parseExpectedRevision, parseScheduleBody } from '../../schedules/schedule-request.input';
import { ScheduleService } from '../schedules/schedule.service';
import { SchedulesRuntime } from '../schedules/schedules.runtime';
import { unknownSchedule } from '../../schedules/errors/schedule.errors';

/** Fire instants one schedule's answer lists (a listing lists the next one). */
const NEXT_RUNS = 10;

/**
 * Builds the admin controller of runtime schedules, under the same prefix and guard as the other admin routes:
 * list, read, upsert (`PUT`), remove, pause and resume, each change a compare-and-set in the cluster's catalog,
 * made against `?expectedRevision=` when given (409 `REVISION_CONFLICT` when the schedule moved on). Encode ids in
 * the path (`encodeURIComponent`).
 */
export function createScheduleAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class ScheduleAdminController {
    constructor(
      private readonly schedules: ScheduleService,
      private readonly runtime: SchedulesRuntime,
    ) {}

    /** Every runtime schedule, by id: definition, revision, next fire instant, last run, and whether this node has its handler. */
    @Get('schedules')
    async list(): Promise<ScheduleOverview[]> {
      return this.runtime.overviews(await this.schedules.schedules(), 1);
    }

    /** One runtime schedule with its next 10 fire instants; 404 `UNKNOWN_SCHEDULE` if there is none. */
    @Get('schedules/:id')
    async one(@Param('id') id: string): Promise<ScheduleOverview> {
      const record = await this.schedules.schedule(id);
      if (!record) throw unknownSchedule(id);
      const [overview] = await this.runtime.overviews([record], NEXT_RUNS);
      return overview;
    }

    /**
     * Creates the schedule or replaces its definition (the body; its `id`, if given, must be the path's). 400 naming
     * the field, 409 `REVISION_CONFLICT` when `expectedRevision` (query or body) is stale. An equal definition
     * writes nothing (`outcome: 'unchanged'`). The handler is not checked: a node deployed later may have it.
     */
    @Put('schedules/:id')
    @HttpCode(200)
    upsert(@Param('id') id: string, @Body() body: unknown, @Query('expectedRevision') expectedRevision?: unknown): Promise<ScheduleChangeResult> {
      const { input, expectedRevision: expected } = parseScheduleBody(id, body, expectedRevision);
      return this.schedules.upsert(input, expected === undefined ? {} : { expectedRevision: expected });
    }

    /** Removes the schedule (`outcome: 'unchanged'` when there was none); 409 when `?expectedRevision=` is stale. */
    @Delete('schedules/:id')
    @HttpCode(200)
    remove(@Param('id') id: string, @Query('expectedRevision') expectedRevision?: unknown): Promise<ScheduleChangeResult> {
      return this.schedules.remove(id, edit(id, expectedRevision));
    }

    /** Pauses the schedule: it fires nowhere until resumed. 404 `UNKNOWN_SCHEDULE`; 409 when `?expectedRevision=` is stale. */
    @Post('schedules/:id/pause')
    @HttpCode(200)
    pause(@Param('id') id: string, @Query('expectedRevision') expectedRevision?: unknown): Promise<ScheduleChangeResult> {
      return this.schedules.pause(id, edit(id, expectedRevision));
    }

    /** Resumes a paused schedule. 404 `UNKNOWN_SCHEDULE`; 409 when `?expectedRevision=` is stale. */
    @Post('schedules/:id/resume')
    @HttpCode(200)
    resume(@Param('id') id: string, @Query('expectedRevision') expectedRevision?: unknown): Promise<ScheduleChangeResult> {
      return this.schedules.resume(id, edit(id, expectedRevision));
    }
  }
  return ScheduleAdminController;
}

/** The options of an edit from its query string. */
function edit(id: string, expectedRevision: unknown): { expectedRevision?: number } {
  const expected = parseExpectedRevision(id, expectedRevision);
  return expected === undefined ? {} : { expectedRevision: expected };
}
