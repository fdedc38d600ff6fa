import { Injectable } from '@nestjs/common';
import type { DecoratedMethod } from '../gatekeeper.explorer';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import { intervalMs } from '../schedule-metadata/schedule-interval.reader';
import { originalMethod } from '../decorated-method';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';
import type { HeldTick } from '../../permits/definition.validator';
import type { ScheduledJob } from '../../schedules/run/scheduled-job';
import { invalidDecorator } from '../errors/decorator.errors';

/** A `@ClusterSingleton` job of this node (or a runtime schedule it takes part in), as the runner runs it. */
export interface RegisteredJob extends ScheduledJob {
  readonly options: ResolvedClusterSingletonOptions;
}

/** The jobs this node runs, by name, found once at start-up. Used inside the module, not by applications. */
@Injectable()
export class JobRegistry {
  private readonly jobs = new Map<string, RegisteredJob>();

  /** Registers the jobs start-up found. */
  register(found: ReadonlyArray<DecoratedMethod<ResolvedClusterSingletonOptions>>): void {
    for (const { where, metadata: options, method, instance } of found) {
      // Said here, naming the job: @nestjs/schedule would throw the cron package's bare message when it mounts it.
      const problem = CronTrigger.problemOf(method);
      if (problem) throw invalidDecorator(`@Cron on ${where}`, problem.reason, problem.field);
      const trigger = CronTrigger.of(method);
      if (options.missedRuns === 'runOnce' && typeof trigger === 'string') {
        throw invalidDecorator(`@ClusterSingleton on ${where}`, `missedRuns: 'runOnce' needs a cron schedule to know which instants were missed, but ${trigger}`, 'missedRuns');
      }
      const body = originalMethod(method);
      const interval = intervalMs(method);
      this.jobs.set(where, {
        name: where, options, trigger: typeof trigger === 'string' ? undefined : trigger, invoke: () => body.call(instance),
        ...(interval !== undefined && { intervalMs: interval }),
      });
    }
  }

  /** Registers (or replaces) one job: a runtime schedule this node takes part in. */
  put(job: RegisteredJob): void {
    this.jobs.set(job.name, job);
  }

  /** Forgets a runtime schedule's job. */
  delete(name: string): void {
    this.jobs.delete(name);
  }

  get(name: string): RegisteredJob | undefined {
    return this.jobs.get(name);
  }

  /**
   * The shortest tick of this node's jobs on `semaphore` that keep its permit from tick to tick (hold mode), with
   * its job; `undefined` when none has a regular tick (a cron expression or an `@Interval`).
   */
  heldTick(semaphore: string): HeldTick | undefined {
    let shortest: HeldTick | undefined;
    for (const job of this.jobs.values()) {
      if (job.options.semaphore !== semaphore || job.options.mode !== 'hold') continue;
      const tickMs = job.trigger?.shortestGapMs ?? job.intervalMs;
      if (tickMs !== undefined && (shortest === undefined || tickMs < shortest.tickMs)) shortest = { job: job.name, tickMs };
    }
    return shortest;
  }

  all(): RegisteredJob[] {
    return [...this.jobs.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
