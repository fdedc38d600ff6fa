import type { JobRunOutcome, RunTrigger } from '../run-record';

/** One run of a job on this node, as run observers see it begin (the same object is handed to its end). */
export interface ObservedRun {
  /** The job's name (`Class.method`, or a runtime schedule's id). */
  readonly job: string;
  /** The semaphore it runs under. */
  readonly semaphore: string;
  /** What started it: its schedule's tick, a run now (`manual`), or a missed instant caught up. */
  readonly trigger: Exclude<RunTrigger, 'call'>;
  /** The scheduled instant it is for (UTC epoch ms); `undefined` for a run now or a job without a cron schedule. */
  readonly instant?: number;
  /** The fencing token of the permit it runs under. */
  readonly token: number;
  /** The "run now" request it answers, for a manual run. */
  readonly request?: string;
}

/**
 * Hears every run of this node's `@ClusterSingleton` jobs and runtime schedules (ticks, runs now and catch-ups) at
 * one place, the way `@nestjs/bullmq`'s worker host wraps every job: each method is optional, called in the order
 * observers were added, after the library's own (history, events, run-now outcome, tracing). An observer that
 * throws is logged and never stops the run or the other observers; a slow one delays only the run that called it,
 * so keep them quick (queue anything slow). Add one with `ScheduleService.observeRuns`.
 *
 * @example
 * ```ts
 * schedules.observeRuns({
 *   started: (run) => metrics.increment(`job.${run.job}.started`),
 *   ended: (run, end) => metrics.timing(`job.${run.job}.${end.outcome}`, end.durationMs),
 * });
 * ```
 */
export interface RunObserver {
  /** A run starts on this node, under its permit (before the job's code is called). */
  started?(run: ObservedRun): void;
  /** The run `run` ended (the same object `started` had), and how. */
  ended?(run: ObservedRun, end: {
    /** `completed`, or how it stopped (see `JobRunOutcome`). */
    readonly outcome: Exclude<JobRunOutcome, 'running' | 'unknown'>;
    /** How long it ran (ms). */
    readonly durationMs: number;
    /** What it threw, unless it completed. */
    readonly error?: unknown;
  }): void;
  /** A tick of a job did not run on this node, and why. */
  skipped?(skip: {
    /** The job's name. */
    readonly job: string;
    /** The semaphore it runs under. */
    readonly semaphore: string;
    /**
     * A deny reason code (`NO_PERMIT_AVAILABLE`: another node holds it, `PAUSED`, `STORE_UNAVAILABLE`, ...), or a
     * reason of this node's: `OVERLAP`, `DUPLICATE_TICK`, `NOT_A_FIRE_INSTANT`, `LATE_DECISION`.
     */
    readonly reason: string;
    /** The scheduled instant the tick was for, when it names one (a cron tick). */
    readonly instant?: number;
  }): void;
}

/** How an observed run ended (see {@link RunObserver.ended}). */
export type ObservedRunEnd = Parameters<NonNullable<RunObserver['ended']>>[1];
/** A tick of a job that did not run on this node (see {@link RunObserver.skipped}). */
export type ObservedSkip = Parameters<NonNullable<RunObserver['skipped']>>[0];
