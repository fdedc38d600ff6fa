import { z } from 'zod';
import { durationInput, omittable, trueOrFalseInput, wholeNumberInput } from '../core/input-fields';
import { parseInput, type InputErrorFactory } from '../core/input-schema';
import { nameInput, shownName } from '../core/names';
import { invalidJobRequest } from './errors/job.errors';

/*
 * Operators' requests about jobs as they arrive, as text (a query string, a JSON body, a command line): validated
 * here, once, for the admin API and the CLI alike; a bad field is named in the error.
 */

/** The most runs one history answer lists. */
export const MAX_HISTORY_LIMIT = 1_000;

/**
 * The longest a "run now" may wait for a node to start it: the HTTP call (or the command line) waits as long, and
 * proxies cut calls much longer than that.
 */
export const MAX_RUN_NOW_TIMEOUT_MS = 5 * 60_000;

/** How long a "run now" waits for a node to start it when the caller does not say. */
export const DEFAULT_RUN_NOW_TIMEOUT_MS = 30_000;

/**
 * The most characters of a job's name as an operator asks for it: a `Class.method`, a runtime schedule's id, a
 * `@LeaderOnly` method's `leader:<election>:<Class.method>`.
 */
export const MAX_JOB_NAME_LENGTH = 500;

const JOB_NAME = nameInput({ max: MAX_JOB_NAME_LENGTH });

const HISTORY_LIMIT = omittable(
  wholeNumberInput({ min: 1, max: MAX_HISTORY_LIMIT }, (given) => `must be a whole number from 1 to ${MAX_HISTORY_LIMIT}, got ${JSON.stringify(given)}`),
);

const RUN_NOW_TIMEOUT = durationInput({ max: MAX_RUN_NOW_TIMEOUT_MS });

const RUN_NOW_BODY = z.strictObject(
  { timeout: RUN_NOW_TIMEOUT.optional(), wait: RUN_NOW_TIMEOUT.optional() },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'is not a field of a run now (expected timeout or wait)' : 'must be a JSON object { timeout?, wait? }') },
);

const JOB_FORCE = trueOrFalseInput.optional();

/** The job's error for a bad field. */
const jobError = (job: string): InputErrorFactory => (field, reason) => invalidJobRequest(job, field, reason);

/**
 * A job's name as an operator gives it (a path, a command line, a service call): a name (lib/core/names) of at most
 * {@link MAX_JOB_NAME_LENGTH} characters, checked before anything is read; throws {@link InvalidInputError} on
 * `job`, the job shown escaped.
 */
export function validateJobName(job: unknown): string {
  const shown = typeof job === 'string' && job.trim() !== '' ? shownName(job) : '<unnamed>';
  return parseInput(JOB_NAME, job, jobError(shown), { field: 'job' });
}

/** A history's `limit` (`?limit=`, `--limit`): a whole number from 1 to {@link MAX_HISTORY_LIMIT}; `undefined`: every run kept. */
export function parseHistoryLimit(job: string, value: unknown): number | undefined {
  return parseInput(HISTORY_LIMIT, value, jobError(job), { field: 'limit' });
}

/** A "run now"'s `timeout` (ms, or `'30s'`), at most {@link MAX_RUN_NOW_TIMEOUT_MS}; `undefined`: the service's default. */
export function parseRunNowTimeout(job: string, value: unknown, field: 'timeout' | 'wait' = 'timeout'): number | undefined {
  return parseInput(RUN_NOW_TIMEOUT.optional(), value, jobError(job), { field });
}

/**
 * A "run now" over the admin API (`POST jobs/:job/run`): the job's name (see {@link validateJobName}) and its body,
 * nothing or `{ timeout?, wait? }` (timeout default {@link DEFAULT_RUN_NOW_TIMEOUT_MS}). Any other key is refused: a
 * misspelt `timout` must not fall back to the default silently.
 */
export function parseRunNowBody(job: string, body: unknown): { timeoutMs: number; waitMs?: number } {
  validateJobName(job);
  const { timeout: timeoutMs = DEFAULT_RUN_NOW_TIMEOUT_MS, wait: waitMs } = parseInput(RUN_NOW_BODY.nullish(), body, jobError(job)) ?? {};
  return { timeoutMs, ...(waitMs !== undefined && { waitMs }) };
}

/**
 * `force` of a pause or resume by job name (`?force=`): `true` lets it change an election's semaphore (a
 * `@LeaderOnly` method's); `undefined` or `false`: not forced.
 */
export function parseJobForce(job: string, value: unknown): { force?: true } {
  return parseInput(JOB_FORCE, value, jobError(job), { field: 'force' }) ? { force: true } : {};
}
