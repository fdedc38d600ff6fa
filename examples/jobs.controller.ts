import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ScheduleService, type JobDescription, type JobHistoryView, type RunNowResult } from 'nestjs-gatekeeper';

/**
 * The job views of an app's own API (the admin API has them too, under its guard): a job's history, everything
 * about it, and "run now".
 */
@Controller('ops/jobs')
export class JobsController {
  constructor(private readonly schedules: ScheduleService) {}

  @Get()
  list(): string[] {
    return this.schedules.jobs();
  }

  @Get(':job/history')
  history(@Param('job') job: string, @Query('limit') limit?: string): Promise<JobHistoryView> {
    return this.schedules.history(job, { limit: limit === undefined ? undefined : Number(limit) });
  }

  @Get(':job')
  describe(@Param('job') job: string): Promise<JobDescription> {
    return this.schedules.describe(job);
  }

  /** Resolves once a node started the run (the holder, if there is one); a refusal names its reason. */
  @Post(':job/run')
  runNow(@Param('job') job: string): Promise<RunNowResult> {
    return this.schedules.runNow(job, { timeout: '30s' });
  }
}
