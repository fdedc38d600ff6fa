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
}

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
  fail: (field: keyof JobPolicyInput, reason: string) => never,
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
  };
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fail: (reason: string) => never): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const shown = value === undefined ? 'nothing' : typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  return fail(`must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${shown}`);
}
