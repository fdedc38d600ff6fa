import { parseDuration, type DurationInput } from '../core/duration';
import { InvalidInputError } from '../core/errors/invalid-input.error';

/**
 * Where a job checks in with the monitor a team already has (Healthchecks.io, Cronitor, or any service that takes a
 * ping by URL): the start, the success and the failure of each scheduled run, sent once per run by the node that ran
 * it, and a failure for scheduled instants the library found nobody ran. Give a service's own address, or the three
 * URLs yourself, where `{run}` becomes an id of the run (a UUID, the same in its start and its end):
 *
 * - `{ healthchecks: 'https://hc-ping.com/<uuid>' }`: `/start`, the URL itself and `/fail`, each with `?rid={run}`;
 * - `{ cronitor: 'https://cronitor.link/p/<key>/<monitor>' }`: `?state=run`, `complete` and `fail`, with `series={run}`;
 * - `{ start, success, failure }`: your own (only `success` is required).
 *
 * A check-in is a GET that waits at most `timeout` (default `'10s'`): a monitor that is down, slow or refuses never
 * delays or fails the job; the first failure of a streak is logged as a warning, and its end once it answers again.
 */
export type CheckInOptions =
  | { readonly healthchecks: string; readonly timeout?: DurationInput }
  | { readonly cronitor: string; readonly timeout?: DurationInput }
  | { readonly start?: string; readonly success: string; readonly failure?: string; readonly timeout?: DurationInput };

/** A job's check-ins, validated: URL templates (`{run}` is the run's id) and the wait of each. */
export interface CheckIn {
  readonly start?: string;
  readonly success: string;
  readonly failure?: string;
  readonly timeoutMs: number;
}

/** The wait of one check-in unless `timeout` says otherwise. */
export const DEFAULT_CHECK_IN_TIMEOUT_MS = 10_000;

/** Validates `checkIn` options; `fail` throws the caller's error naming the field (`checkIn.<field>`). */
export function resolveCheckIn(input: unknown, fail: (field: string, reason: string) => never): CheckIn {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return fail('checkIn', `must be an object ({ healthchecks }, { cronitor } or { start, success, failure }), got ${JSON.stringify(input)}`);
  const options = input as Record<string, unknown>;
  const known = ['healthchecks', 'cronitor', 'start', 'success', 'failure', 'timeout'];
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length > 0) fail(`checkIn.${unknown[0]}`, `is not a check-in option (${known.join(', ')})`);
  const kinds = ['healthchecks', 'cronitor', 'success'].filter((key) => options[key] !== undefined);
  if (kinds.length !== 1) fail('checkIn', `needs exactly one of healthchecks, cronitor or success, got ${kinds.length === 0 ? 'none' : kinds.join(' and ')}`);
  if (kinds[0] !== 'success') for (const key of ['start', 'failure']) if (options[key] !== undefined) fail(`checkIn.${key}`, `only applies with success, not with ${kinds[0]}`);
  let timeoutMs = DEFAULT_CHECK_IN_TIMEOUT_MS;
  if (options.timeout !== undefined) {
    try {
      timeoutMs = parseDuration(options.timeout as DurationInput, undefined, 'checkIn.timeout');
    } catch (error) {
      if (error instanceof InvalidInputError) fail('checkIn.timeout', error.reason);
      throw error;
    }
  }
  const url = (field: string): string => checkedUrl(options[field], `checkIn.${field}`, fail);
  if (kinds[0] === 'healthchecks') {
    const base = url('healthchecks').replace(/\/+$/, '');
    if (base.includes('?')) fail('checkIn.healthchecks', 'must be the ping URL without a query (the run id is added as ?rid=)');
    return { start: `${base}/start?rid={run}`, success: `${base}?rid={run}`, failure: `${base}/fail?rid={run}`, timeoutMs };
  }
  if (kinds[0] === 'cronitor') {
    const base = url('cronitor');
    const join = base.includes('?') ? '&' : '?';
    return { start: `${base}${join}state=run&series={run}`, success: `${base}${join}state=complete&series={run}`, failure: `${base}${join}state=fail&series={run}`, timeoutMs };
  }
  return {
    ...(options.start !== undefined && { start: url('start') }),
    success: url('success'),
    ...(options.failure !== undefined && { failure: url('failure') }),
    timeoutMs,
  };
}

/** A resolved check-in in the input form (its own three URLs, the wait in ms): what resolves to it again. */
export function checkInInput(checkIn: CheckIn): CheckInOptions {
  const { start, success, failure, timeoutMs } = checkIn;
  return { ...(start !== undefined && { start }), success, ...(failure !== undefined && { failure }), timeout: timeoutMs };
}

/** `value` as an http(s) URL (a `{run}` in it allowed), or `fail` naming `field`. */
function checkedUrl(value: unknown, field: string, fail: (field: string, reason: string) => never): string {
  if (typeof value !== 'string' || value === '') return fail(field, `must be an http(s) URL, got ${JSON.stringify(value)}`);
  let parsed: URL;
  try {
    parsed = new URL(value.replaceAll('{run}', 'run'));
  } catch {
    return fail(field, `must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') fail(field, `must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value;
}
