import type { CheckInOptions } from './check-in';
import type { DurationInput } from '../core/duration';
import { MAX_SEMAPHORE_NAME_LENGTH } from '../permits/semaphore-definition';
import type { MissedRunPolicy, OverlapPolicy } from './job-policy';

export type { MissedRunPolicy, OverlapPolicy } from './job-policy';
export { DEFAULT_REPLACE_WAIT_MS } from './job-policy';

/** JSON as a schedule's `data` holds it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Checks a cron expression in its time zone with the cron package the application runs: returns why it is
 * invalid, or `undefined` when it is valid (throwing counts as invalid, with the error's message). The catalog
 * checks only the expression's shape itself (a string of 5 or 6 fields), so it never disagrees with the runner.
 */
export type CronValidator = (expression: string, timeZone: string) => string | undefined;

/** A schedule defined at runtime, as an application writes it (service, admin API, CLI). */
export interface ScheduleDefinitionInput {
  /**
   * The schedule's id: 1 to `MAX_SCHEDULE_ID_LENGTH` (191) characters, not starting with `leader:` (the run
   * history's names of `@LeaderOnly` methods). Upserts are idempotent by id.
   */
  id: string;
  /** A cron expression of 5 fields (minute first) or 6 (second first). */
  cron: string;
  /** The IANA time zone the expression fires in, e.g. `'Europe/Berlin'`. Default `'UTC'`. */
  timeZone?: string;
  /** The name of a handler registered in code; every node that has it takes part. */
  handler: string;
  /** What the handler gets: JSON, at most `MAX_SCHEDULE_DATA_BYTES` (64 kB) bytes encoded. Default `null`. */
  data?: JsonValue;
  /** A paused schedule fires nowhere; its definition is kept. Default `false`. */
  paused?: boolean;
  /** The semaphore whose permit each run needs. Default `schedule:<id>`. */
  semaphore?: string;
  /** How many nodes may hold a permit (and so run) at once. Default `1`. Pause with `paused`, not `0`. */
  permits?: number;
  /**
   * How long a permit lives unless refreshed. Required (not guessed from the cron gap): like the `@ClusterSingleton`
   * duration, it bounds how long a crashed holder keeps the job from the others, which only the application knows.
   */
  duration: DurationInput;
  /** Regex (full match) a node's group must match to run it. Default `'.*'` (any group). */
  groupPattern?: string;
  /** Regex (full match) a node's acquirer name must match to run it. Default `'.*'` (any acquirer). */
  acquirerPattern?: string;
  /** `'skip'` (default): instants missed while nobody could run it are counted, not run. `'runOnce'`: the newest missed instant within `catchUpWindow` runs once. */
  missedRuns?: MissedRunPolicy;
  /** With `missedRuns: 'runOnce'`: how old a missed instant may be and still run. Default `'1h'`. */
  catchUpWindow?: DurationInput;
  /** `'skip'` (default): a tick during a run is skipped. `'replace'`: the running run's signal fires, and the new run starts once it ended. */
  overlap?: OverlapPolicy;
  /** With `overlap: 'replace'`: how long to wait for the running run to end. Default `'30s'`. */
  replaceWait?: DurationInput;
  /**
   * When its runs are said to be late, failing or recovered, as a `@ClusterSingleton`'s `health` option: `grace` for a
   * late start, `failureThreshold` failed runs in a row to be failing (default 1), `recoveryThreshold` completed runs
   * in a row to recover (default 1).
   */
  health?: { grace?: DurationInput; failureThreshold?: number; recoveryThreshold?: number };
  /**
   * Where its runs check in with the monitor a team already has, as a `@ClusterSingleton`'s `checkIn` option: the
   * start, success and failure of each scheduled run, and a failure for each instant judged missed, once each.
   */
  checkIn?: CheckInOptions;
}

/** A validated schedule definition, as stored in the cluster: every default filled in, durations in ms. */
export interface ScheduleDefinition {
  /** The schedule's id (also its job name). */
  readonly id: string;
  /** The cron expression, its fields separated by single spaces. */
  readonly cron: string;
  /** The IANA time zone it fires in. */
  readonly timeZone: string;
  /** The `@ScheduleHandler` name its runs call. */
  readonly handler: string;
  /** The handler's data, objects' keys in code-point order (so equal data is stored as equal bytes). */
  readonly data: JsonValue;
  /** Whether it fires nowhere for now. */
  readonly paused: boolean;
  /** The semaphore whose permit each run needs. */
  readonly semaphore: string;
  /** How many nodes may hold a permit at once. */
  readonly permits: number;
  /** How long a permit lives unless refreshed, in ms. */
  readonly durationMs: number;
  /** Regex (full match) a node's group must match. */
  readonly groupPattern: string;
  /** Regex (full match) a node's acquirer name must match. */
  readonly acquirerPattern: string;
  /** What happens to instants missed while nobody could run it. */
  readonly missedRuns: MissedRunPolicy;
  /** Set with `missedRuns: 'runOnce'` only. */
  readonly catchUpWindowMs?: number;
  /** What a tick does while the previous run still goes. */
  readonly overlap: OverlapPolicy;
  /** Set with `overlap: 'replace'` only. */
  readonly replaceWaitMs?: number;
  /** Set when its `health` was given: the grace of a late start (if any), and both thresholds. */
  readonly health?: { readonly graceMs?: number; readonly failureThreshold: number; readonly recoveryThreshold: number };
  /** Set when its `checkIn` was given: the URL templates (`{run}` the run's id) and the wait of each check-in, in ms. */
  readonly checkIn?: { readonly start?: string; readonly success: string; readonly failure?: string; readonly timeoutMs: number };
}

/** The default semaphore of a schedule is this followed by its id. */
export const SCHEDULE_SEMAPHORE_PREFIX = 'schedule:';

/** The most characters a schedule id may have: its default semaphore name must fit a semaphore name. */
export const MAX_SCHEDULE_ID_LENGTH = MAX_SEMAPHORE_NAME_LENGTH - SCHEDULE_SEMAPHORE_PREFIX.length;

/** The most bytes a schedule's `data` may take, encoded as UTF-8 JSON. */
export const MAX_SCHEDULE_DATA_BYTES = 64 * 1024;

/** The default catch-up window of `missedRuns: 'runOnce'`, in ms. */
export const DEFAULT_CATCH_UP_WINDOW_MS = 3_600_000;

