import { formatDuration, parseDuration } from '../core/duration';
import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { InvalidJobRequestError } from './errors/invalid-job-request.error';

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

/** A history's `limit` (`?limit=`, `--limit`): a whole number from 1 to {@link MAX_HISTORY_LIMIT}; `undefined`: every run kept. */
export function parseHistoryLimit(job: string, value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  const limit = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) {
    throw new InvalidJobRequestError(job, 'limit', `must be a whole number from 1 to ${MAX_HISTORY_LIMIT}, got ${JSON.stringify(value)}`);
  }
  return limit;
}

/** A "run now"'s `timeout` (ms, or `'30s'`), at most {@link MAX_RUN_NOW_TIMEOUT_MS}; `undefined`: the service's default. */
export function parseRunNowTimeout(job: string, value: unknown, field: 'timeout' | 'wait' = 'timeout'): number | undefined {
  if (value === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(value as string | number, job, field);
  } catch (error) {
    if (error instanceof InvalidDefinitionError) throw new InvalidJobRequestError(job, field, error.reason);
    throw error;
  }
  if (ms > MAX_RUN_NOW_TIMEOUT_MS) {
    throw new InvalidJobRequestError(job, field, `must be at most ${formatDuration(MAX_RUN_NOW_TIMEOUT_MS)}, got ${JSON.stringify(value)}`);
  }
  return ms;
}

/**
 * The body of a "run now" (`POST jobs/:job/run`): nothing, or `{ timeout? }`. Any other key is refused: a
 * misspelt `timout` must not fall back to the default silently.
 */
export function parseRunNowBody(job: string, body: unknown): { timeoutMs?: number; waitMs?: number } {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidJobRequestError(job, 'body', 'must be a JSON object { timeout?, wait? }');
  const unknown = Object.keys(body).find((key) => key !== 'timeout' && key !== 'wait');
  if (unknown !== undefined) throw new InvalidJobRequestError(job, unknown, 'is not a field of a run now (expected timeout or wait)');
  const timeoutMs = parseRunNowTimeout(job, (body as { timeout?: unknown }).timeout);
  const waitMs = parseRunNowTimeout(job, (body as { wait?: unknown }).wait, 'wait');
  return { ...(timeoutMs !== undefined && { timeoutMs }), ...(waitMs !== undefined && { waitMs }) };
}

/**
 * `force` of a pause or resume by job name (`?force=`): `true` lets it change an election's semaphore (a
 * `@LeaderOnly` method's); `undefined` or `false`: not forced.
 */
export function parseJobForce(job: string, value: unknown): { force?: true } {
  if (value === undefined || value === 'false' || value === false) return {};
  if (value === 'true' || value === true) return { force: true };
  throw new InvalidJobRequestError(job, 'force', `must be true or false, got ${JSON.stringify(value)}`);
}
