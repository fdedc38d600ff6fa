import { parseDuration } from '../../core/duration';
import { validateSemaphoreName } from '../../permits/definition.validator';
import type { DurationInput } from '../../permits/semaphore-definition';
import { resolveJobPolicy, type JobPolicy } from '../../schedules/job-policy';
import type { DecoratedSemaphore } from '../permits/permits.startup';
import { invalidDefinition } from '../../core/errors/input.errors';
import { resolveCheckIn, type CheckIn, type CheckInOptions } from '../../schedules/check-in';

/** Options of `@ClusterSingleton({...})`. */
export interface ClusterSingletonOptions {
  /** The semaphore to take a permit of. */
  semaphore: string;
  /**
   * Permit duration used when the semaphore has no definition and `autoDefine` is on. When a definition exists,
   * its `duration` wins (it can be edited live). Should be longer than the interval between ticks in hold mode.
   */
  duration?: DurationInput;
  /**
   * `'hold'` (default): the holder refreshes its permit on every tick and keeps the job until it stops
   * refreshing (crash, shutdown, or a definition that no longer matches it).
   * `'release'` (ShedLock): the permit is released after each run, but not before `lockAtLeastFor`.
   */
  mode?: 'hold' | 'release';
  /** Release mode: the least time a permit is kept after it was taken, so nodes whose clocks or ticks run a bit
   * late do not run the same tick again. Default `0`, as in ShedLock: set it to a little less than the interval. */
  lockAtLeastFor?: DurationInput;
  /** Refresh the permit in the background while a run takes longer than a third of its duration. Default `true`. */
  keepAlive?: boolean;
  /**
   * The most a run may keep the permit (ShedLock's `lockAtMostFor`): keep-alive stops then and the run's lease
   * fires its signal, so a hung job cannot hold the permit forever. The job should stop at the signal; one that
   * ignores it runs on without a permit once the permit expires. Default: no limit (a hung job keeps the permit
   * for as long as keep-alive runs).
   */
  maxRunTime?: DurationInput;
  /**
   * When a tick comes while this node's previous run is still going: `'skip'` (default) drops the tick (counted
   * as `OVERLAP` in the history); `'replace'` fires the running run's `AbortSignal`, waits up to `replaceWait` for
   * it to end, then starts the new run (never two at once: a run that does not end in time keeps going, and the
   * tick is skipped).
   */
  overlap?: 'skip' | 'replace';
  /** With `overlap: 'replace'`: how long to wait for the running run to stop. Default `'30s'`. */
  replaceWait?: DurationInput;
  /**
   * Fire instants of the job's `@Cron` that passed while nobody could run it (every node down, the cluster
   * unreachable, the permit recovering, a restart) are counted in the history either way. `'skip'` (default):
   * nothing more. `'runOnce'`: the newest of them runs once, marked `catchUp`, as soon as a node can run the job
   * again (at start-up, or at the tick that takes the permit), if it is within `catchUpWindow`; never a burst.
   */
  missedRuns?: 'skip' | 'runOnce';
  /** With `missedRuns: 'runOnce'`: how old the newest missed instant may be to still run. Default: the shortest time between two fire instants. */
  catchUpWindow?: DurationInput;
  /**
   * Check in with the monitor you already use (Healthchecks.io, Cronitor, or URLs of your own): each scheduled run's
   * start, success and failure, once per run from the node that ran it, and a failure for instants nobody ran. See
   * {@link CheckInOptions}. A monitor that is down never affects the job.
   *
   * @example
   * ```ts
   * @Cron('0 2 * * *')
   * @ClusterSingleton({ semaphore: 'nightly-report', duration: '10m', checkIn: { healthchecks: 'https://hc-ping.com/your-uuid' } })
   * async nightlyReport(): Promise<void> {}
   * ```
   */
  checkIn?: CheckInOptions;
  /**
   * When the job is said to be late, failing or recovered, as a cron monitor's knobs (Healthchecks.io's grace,
   * Sentry Crons' failure and recovery thresholds), each said once for the cluster as an event:
   * - `grace`: a `@Cron` (or runtime schedule) run that starts later than this after its instant is late
   *   (`gatekeeper.job.late`, from the node that ran it). Default: never said. Keep it under half the period: a tick
   *   decided later than that is not run at all (`LATE_DECISION`), and is not late but skipped.
   * - `failureThreshold`: failed runs in a row, on any nodes, that make the job failing (`gatekeeper.job.failing`).
   *   Default `1`.
   * - `recoveryThreshold`: completed runs in a row that make a failing job recovered (`gatekeeper.job.recovered`).
   *   Default `1`.
   *
   * Failing and recovered are decided where the run history is merged, by the one node whose write of it makes the
   * change: they come with the history's flush (`schedules.history.flushInterval`), not at the run's end. A run past
   * `maxRunTime` is `gatekeeper.job.overran`. Without this option a job is not judged (no events, no `failingSince`,
   * its health check as before); `health: {}` judges it with the defaults.
   */
  health?: {
    grace?: DurationInput;
    failureThreshold?: number;
    recoveryThreshold?: number;
  };
}

/**
 * Decorator options after validation: the job's policy, with its semaphore and duration. Recorded on the method, where
 * the schedules read it whole and the permits' start-up reads its {@link DecoratedSemaphore} part.
 */
export interface ResolvedClusterSingletonOptions extends JobPolicy, DecoratedSemaphore {
  readonly semaphore: string;
  readonly durationMs: number | undefined;
  /**
   * Runtime schedules, whose timer the library owns: a second tick for an instant already started here is skipped
   * (`DUPLICATE_TICK`). Off for decorated methods, which an application may also call itself.
   */
  readonly oncePerInstant?: boolean;
  /** Where its scheduled runs check in. */
  readonly checkIn?: CheckIn;
}

/** Validates decorator options when the class is loaded, naming the semaphore and the field. */
export function resolveClusterSingletonOptions(
  semaphoreOrOptions: string | ClusterSingletonOptions,
  duration?: DurationInput,
): ResolvedClusterSingletonOptions {
  const options = typeof semaphoreOrOptions === 'string' ? { semaphore: semaphoreOrOptions, duration } : semaphoreOrOptions;
  const semaphore = validateSemaphoreName(options?.semaphore);
  const fail = (field: string, reason: string): never => {
    throw invalidDefinition(semaphore, field, reason);
  };
  return {
    semaphore,
    durationMs: options.duration === undefined ? undefined : parseDuration(options.duration, semaphore, 'duration'),
    ...resolveJobPolicy(options, fail),
    ...(options.checkIn !== undefined && { checkIn: resolveCheckIn(options.checkIn, fail) }),
  };
}
