import { Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import type { JobStart } from '../../schedules/run/scheduled-job';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';
import type { RegisteredJob } from './job-registry';
import { SchedulesRuntime } from './schedules.runtime';

/**
 * The Nest side of the run pipeline (lib/schedules/run): what a `@ClusterSingleton` method's wrapper calls on every
 * tick, and start-up's catch-up at bootstrap. Every decision is the `JobRunner`'s.
 */
@Injectable()
export class ClusterSingletonRunner implements OnModuleInit, OnApplicationBootstrap {
  /** Before any `@Cron` timer starts (`@nestjs/schedule` starts them at bootstrap, after every module's init). */
  private armedAt?: number;

  constructor(private readonly schedules: SchedulesRuntime) {}

  onModuleInit(): void {
    this.armedAt = this.schedules.pipeline.runner.now();
  }

  /**
   * Jobs with `missedRuns: 'runOnce'` catch up as soon as this node can run them (see `JobRunner.catchUpAtStart`),
   * instants up to the moment before the timers started: an instant a timer fires is never caught up too.
   */
  onApplicationBootstrap(): void {
    this.schedules.pipeline.runner.catchUpAtStart(this.schedules.jobs.all(), this.armedAt);
  }

  /**
   * A call of a `@ClusterSingleton` method (its `@Cron` tick, or the application calling it): a tick of the job
   * `where`, running `body` (the method with the call's arguments). A method start-up did not register (its class
   * not a provider the explorer found) runs as a job of its own options, with no schedule.
   */
  tick(options: ResolvedClusterSingletonOptions, where: string, body: () => unknown): Promise<unknown> {
    const job = this.schedules.jobs.get(where) ?? { name: where, options, invoke: body };
    return this.run(job, { kind: 'tick' }, body);
  }

  /** One run of `job` through the pipeline; the body's result, or `undefined` when nothing ran here. */
  run(job: RegisteredJob, start: JobStart, body?: () => unknown): Promise<unknown> {
    return this.schedules.pipeline.runner.run(job, start, body);
  }
}
