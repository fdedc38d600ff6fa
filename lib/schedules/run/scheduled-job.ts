import type { CheckIn } from '../check-in';
import type { JobPolicy } from '../job-policy';

/**
 * A job's cron schedule as the runner reads it: what `CronSchedule` (lib/core/cron-schedule.ts) answers, read by the
 * Nest layer's `CronTrigger`: the same instants on every node.
 */
export interface JobCalendar {
  /** The cron expression, as written. */
  readonly expression: string;
  /** The time zone it fires in; `undefined`: the process's zone. */
  readonly timeZone: string | undefined;
  /** The shortest time between two fire instants (ms). */
  readonly shortestGapMs: number;
  /** A step every fire instant is a whole number of from every other (ms): two fires one step apart have none between. */
  readonly gridMs?: number;
  /** The scheduled instant a call at `now` is for; `undefined` for a timer tick at an instant that is not a fire instant. */
  instantFor(now: number): number | undefined;
  /** The next `count` fire instants after `from`. */
  next(from: number, count: number): number[];
  /** The fire instants strictly between `after` and `before`: how many (up to `cap`) and the newest. */
  firesBetween(after: number, before: number, cap?: number): { count: number; last?: number };
}

/** How a job runs, as the runner needs it: its policy and the semaphore it runs under. */
export interface JobRunPolicy extends JobPolicy {
  readonly semaphore: string;
  /** Each scheduled instant runs at most once here (a second tick for it is `DUPLICATE_TICK`). */
  readonly oncePerInstant?: boolean;
  /** Where its runs check in (a decorated job's `checkIn`). */
  readonly checkIn?: CheckIn;
}

/** A job of this node, as the runner runs it: a decorated method or a runtime schedule. */
export interface ScheduledJob {
  /** `Class.method` (or the runtime schedule's name): the job's name in the history, the API and the CLI. */
  readonly name: string;
  readonly options: JobRunPolicy;
  /** Its cron schedule; `undefined` for `@Interval`/`@Timeout` ticks or direct calls. */
  readonly trigger?: JobCalendar;
  /** Its `@Interval` period (ms); `undefined` for any other schedule. */
  readonly intervalMs?: number;
  /** The job's own body, with no arguments: what a run calls under its permit. */
  readonly invoke: () => unknown;
  /** A runtime schedule paused by its own definition (a decorated job is paused by its semaphore's permits). */
  readonly paused?: boolean;
}

/** A "run now" of a job being tried on this node: the runner runs it, marked manual, if it can claim the request. */
export interface ManualRun {
  /** The request's id. */
  readonly request: string;
  /** Claims the request under the permit `token` (compare-and-set); false when another node did, or it was withdrawn. */
  claim(token: number): Promise<boolean>;
  /** Set once the run started here. */
  started?: { readonly token: number; readonly at: number };
}

/**
 * What starts a run of a job, the one input of the runner's one path: a tick of its schedule (a `@Cron` timer, a
 * runtime schedule's timer, or a direct call of the decorated method), a run now being tried here, or start-up's
 * catch-up of a `missedRuns: 'runOnce'` job, which runs only an instant missed before the node started (instants
 * after it are the timer's own ticks, even while the catch-up is still deciding).
 */
export type JobStart =
  | { readonly kind: 'tick' }
  | { readonly kind: 'manual'; readonly manual: ManualRun }
  | { readonly kind: 'startup'; readonly startedAt: number };
