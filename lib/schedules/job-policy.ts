import { parseDuration, type DurationInput } from '../core/duration';
import { InvalidInputError } from '../core/errors/invalid-input.error';

/** What a job does with fire instants that passed while no node could run it. */
export type MissedRunPolicy = 'skip' | 'runOnce';

/** What a job does when it fires while its previous run is still going. */
export type OverlapPolicy = 'skip' | 'replace';

/**
 * How a job runs, whatever starts it: the options a `@ClusterSingleton` decorator and a runtime schedule share (a
 * runtime schedule takes the last four; the others are its defaults). Each is documented on the decorator's options.
 */
export interface JobPolicyInput {
  mode?: 'hold' | 'release';
  lockAtLeastFor?: DurationInput;
  keepAlive?: boolean;
  maxRunTime?: DurationInput;
  overlap?: OverlapPolicy;
  replaceWait?: DurationInput;
  missedRuns?: MissedRunPolicy;
  catchUpWindow?: DurationInput;
  health?: {
    grace?: DurationInput;
    failureThreshold?: number;
    recoveryThreshold?: number;
  };
}

/** When a job's runs are said to be late, failing, or recovered (see `ClusterSingletonOptions.health`). */
export interface JobHealthPolicy {
  /** A scheduled run that starts later than this after its instant is late; `undefined`: never said. */
  readonly graceMs: number | undefined;
  /** Failed runs in a row, cluster-wide, that make the job failing. */
  readonly failureThreshold: number;
  /** Completed runs in a row that make a failing job recovered. */
  readonly recoveryThreshold: number;
}

/** Health as a job has it when its `health` option is given empty: no grace, one failure to fail, one success to recover. */
export const DEFAULT_JOB_HEALTH: JobHealthPolicy = { graceMs: undefined, failureThreshold: 1, recoveryThreshold: 1 };

/** A job's policy, validated, every default filled in. */
export interface JobPolicy {
  readonly mode: 'hold' | 'release';
  /** Release mode only; 0 otherwise. */
  readonly lockAtLeastForMs: number;
  readonly keepAlive: boolean;
  /** `undefined`: no limit. */
  readonly maxRunTimeMs: number | undefined;
  readonly overlap: OverlapPolicy;
  readonly replaceWaitMs: number;
  readonly missedRuns: MissedRunPolicy;
  /** `undefined`: the shortest gap of the job's cron expression. */
  readonly catchUpWindowMs: number | undefined;
  /** `undefined`: not judged (no late, failing or recovered), as before the option existed. */
  readonly health: JobHealthPolicy | undefined;
}

/** The default wait of `overlap: 'replace'`, in ms. */
export const DEFAULT_REPLACE_WAIT_MS = 30_000;

/**
 * Validates a job's policy, the one rule for decorators and runtime schedules: each value of its kind, and an option
 * that only applies with another (`lockAtLeastFor` with release mode, `replaceWait` with `overlap: 'replace'`,
 * `catchUpWindow` with `missedRuns: 'runOnce'`) refused without it. `fail` throws the caller's error naming the field.
 */
export function resolveJobPolicy(
  input: JobPolicyInput,
  fail: (field: keyof JobPolicyInput | `health.${string}`, reason: string) => never,
  defaults: { readonly catchUpWindowMs?: number } = {},
): JobPolicy {
  const duration = (field: keyof JobPolicyInput, value: DurationInput, allowZero = false): number => {
    try {
      return parseDuration(value, undefined, field, { allowZero });
    } catch (error) {
      if (error instanceof InvalidInputError) return fail(field, error.reason);
      throw error;
    }
  };
  const mode = oneOf(input.mode ?? 'hold', ['hold', 'release'] as const, (reason) => fail('mode', reason));
  if (input.lockAtLeastFor !== undefined && mode !== 'release') fail('lockAtLeastFor', "only applies to mode: 'release'");
  const overlap = oneOf(input.overlap ?? 'skip', ['skip', 'replace'] as const, (reason) => fail('overlap', reason));
  if (input.replaceWait !== undefined && overlap !== 'replace') fail('replaceWait', "only applies to overlap: 'replace'");
  const missedRuns = oneOf(input.missedRuns ?? 'skip', ['skip', 'runOnce'] as const, (reason) => fail('missedRuns', reason));
  if (input.catchUpWindow !== undefined && missedRuns !== 'runOnce') fail('catchUpWindow', "only applies to missedRuns: 'runOnce'");
  const keepAlive = input.keepAlive ?? true;
  if (typeof keepAlive !== 'boolean') fail('keepAlive', `must be true or false, got ${JSON.stringify(keepAlive)}`);
  return {
    mode,
    lockAtLeastForMs: input.lockAtLeastFor === undefined ? 0 : duration('lockAtLeastFor', input.lockAtLeastFor, true),
    keepAlive,
    maxRunTimeMs: input.maxRunTime === undefined ? undefined : duration('maxRunTime', input.maxRunTime),
    overlap,
    replaceWaitMs: input.replaceWait === undefined ? DEFAULT_REPLACE_WAIT_MS : duration('replaceWait', input.replaceWait),
    missedRuns,
    catchUpWindowMs: input.catchUpWindow === undefined ? (missedRuns === 'runOnce' ? defaults.catchUpWindowMs : undefined) : duration('catchUpWindow', input.catchUpWindow),
    health: input.health === undefined ? undefined : resolveHealth(input.health, fail),
  };
}

/** The `health` option: an object of known keys, a duration and two whole counts of at least 1. */
function resolveHealth(input: unknown, fail: (field: `health.${string}` | 'health', reason: string) => never): JobHealthPolicy {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail('health', `must be an object, got ${JSON.stringify(input)}`);
  const known = ['grace', 'failureThreshold', 'recoveryThreshold'];
  const unknown = Object.keys(input).filter((key) => !known.includes(key));
  if (unknown.length > 0) fail(`health.${unknown[0]}`, `is not an option (health takes ${known.join(', ')})`);
  const { grace, failureThreshold, recoveryThreshold } = input as NonNullable<JobPolicyInput['health']>;
  const count = (field: 'failureThreshold' | 'recoveryThreshold', value: unknown): number => {
    if (value === undefined) return 1;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1_000) return fail(`health.${field}`, `must be a whole number from 1 to 1000, got ${JSON.stringify(value)}`);
    return value;
  };
  let graceMs: number | undefined;
  if (grace !== undefined) {
    try {
      graceMs = parseDuration(grace, undefined, 'health.grace', { allowZero: true });
    } catch (error) {
      if (error instanceof InvalidInputError) return fail('health.grace', error.reason);
      throw error;
    }
  }
  return { graceMs, failureThreshold: count('failureThreshold', failureThreshold), recoveryThreshold: count('recoveryThreshold', recoveryThreshold) };
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fail: (reason: string) => never): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const shown = value === undefined ? 'nothing' : typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  return fail(`must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${shown}`);
}
