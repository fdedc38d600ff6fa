import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, UseGuards, UseFilters, type CanActivate, type Type } from '@nestjs/common';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { AdminExceptionFilter } from './admin-exception.filter';
import { parseHistoryLimit, parseJobForce, parseRunNowBody } from '../../schedules/job-request.input';
import { summarizeJob, type JobSummary } from '../../schedules/job-summary';
import { judgeJob, jobHealthWithin, type JobHealthDetails } from '../../schedules/job-health.rules';
import type { JobDescription, JobHistoryView, JobPauseResult, RunNowResult } from '../../schedules/job-view';
import { RuntimeSchedules } from '../schedules/runtime-schedules';
import { ScheduleService } from '../schedules/schedule.service';
import { SchedulesRuntime } from '../schedules/schedules.runtime';

/**
 * Builds the admin controller of scheduled jobs, under the same prefix and guard as the other admin routes: this
 * node's jobs, one job described, its run history (read from the cluster), "run now", and pause and resume by the
 * job's name. Jobs are named `Class.method`: the dot is part of the path segment (`jobs/BillingJobs.charge`); encode
 * other characters.
 */
export function createJobAdminController(path: string, guard: Type<CanActivate>): Type {
  @Controller(path)
  @UseGuards(guard)
  @UseFilters(AdminExceptionFilter)
  class JobAdminController {
    constructor(
      private readonly schedules: ScheduleService,
      private readonly runtimeSchedules: RuntimeSchedules,
      private readonly runtime: SchedulesRuntime,
      @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    ) {}

    /** This node's jobs: semaphore, holders, paused, last run (with its outcome), next run; `schedule: true` on a runtime schedule's. */
    @Get('jobs')
    async list(): Promise<JobSummary[]> {
      const described = await Promise.all(this.schedules.jobs().map((job) => this.schedules.describe(job)));
      return described.map((d) => ({ ...summarizeJob(d), ...(this.runtimeSchedules.takesPart(d.job) && { schedule: true as const }) }));
    }

    /** Everything about a job: definition, holders, cron and zone, the next 10 fire instants, runs, counts; 404 if this node has no such job. */
    @Get('jobs/:job')
    describe(@Param('job') job: string): Promise<JobDescription> {
      return this.schedules.describe(job);
    }

    /** The job's runs, newest first (`?limit=`, default every run kept), with skipped and missed counts; 404 for a job nobody knows. */
    @Get('jobs/:job/history')
    history(@Param('job') job: string, @Query('limit') limit?: unknown): Promise<JobHistoryView> {
      return this.schedules.history(job, { limit: parseHistoryLimit(job, limit) });
    }

    /**
     * The job's health from the cluster's history (`?within=26h`, required): `up` while it completed a run within it
     * anywhere, or while paused; `down` with when it last completed and what failed since. 200 either way (the
     * answer says which); 400 naming `within`; 404 for a job this node does not have.
     */
    @Get('jobs/:job/health')
    async health(@Param('job') job: string, @Query('within') within?: unknown): Promise<JobHealthDetails & { readonly status: 'up' | 'down' }> {
      const withinMs = jobHealthWithin(job, within ?? null);
      return judgeJob(await this.schedules.describe(job), withinMs, this.options.clock.now());
    }

    /**
     * Runs the job once, now, in the cluster (body `{ timeout?, wait? }`, timeout default 30 s); answers once a node
     * started it, or with `wait` once its run ended (at most that long after it started), with its `outcome`.
     * 404 for a job this node does not have, 409 with the reason code (`PAUSED`, `NO_ELIGIBLE_NODE`, `LOCKED`, `RECOVERING`, `NOT_STARTED`).
     */
    @Post('jobs/:job/run')
    @HttpCode(200)
    run(@Param('job') job: string, @Body() body?: unknown): Promise<RunNowResult> {
      // No body arrives as undefined or null, `{}` (Express) or an empty text `''` (Fastify): all mean nothing asked.
      const { timeoutMs, waitMs } = parseRunNowBody(job, body === '' ? undefined : body);
      // Parsed to milliseconds here already: straight to the run-now requests, not parsed again by the service.
      return this.runtime.pipeline.requests.request(job, timeoutMs, waitMs);
    }

    /**
     * Pauses the job by its name: a `@ClusterSingleton` job's semaphore (permits to 0, every job sharing it stops too:
     * `alsoAffected`), or a runtime schedule alone. `?force=true` for a `@LeaderOnly` method (its election's
     * semaphore). 404 for a job this node does not have, 400 naming the semaphore when it needs `force`.
     */
    @Post('jobs/:job/pause')
    @HttpCode(200)
    pause(@Param('job') job: string, @Query('force') force?: unknown): Promise<JobPauseResult> {
      return this.schedules.pauseJob(job, parseJobForce(job, force));
    }

    /** Resumes the job: its semaphore gets back the permits it had before the pause, or its runtime schedule fires again. As pause otherwise. */
    @Post('jobs/:job/resume')
    @HttpCode(200)
    resume(@Param('job') job: string, @Query('force') force?: unknown): Promise<JobPauseResult> {
      return this.schedules.resumeJob(job, parseJobForce(job, force));
    }
  }
  return JobAdminController;
}
