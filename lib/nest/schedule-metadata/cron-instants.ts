/** A `cron` CronTime, as far as stepping through its instants goes. */
export interface CronSteps {
  getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
}

/**
 * How far ahead the `cron` package looks for an instant, counted from the current date (not from where it starts):
 * past it, `getNextDateFrom` throws. A yearly expression has 8 instants within it; a leap day, 2.
 */
export const CRON_HORIZON_MS = 8 * 365 * 24 * 3600_000;

/** What the package throws when no instant is within its horizon. */
const BEYOND_HORIZON = /No execution date was found/;

/** Said of a list of fire instants that stopped at the package's horizon, fewer than asked. */
export const CRON_HORIZON_NOTE = 'the cron package looks at most 8 years ahead: no later fire instants are listed';

/**
 * The first fire instant after `from` (epoch ms), or `undefined` when none is within the package's horizon (any
 * other error of the package is thrown as it is).
 */
export function nextInstant(cronTime: CronSteps, zone: string | undefined, from: number): number | undefined {
  try {
    return cronTime.getNextDateFrom(new Date(from), zone).toMillis();
  } catch (error) {
    if (error instanceof Error && BEYOND_HORIZON.test(error.message)) return undefined;
    throw error;
  }
}

/** Up to `count` fire instants after `from`: fewer when the package's horizon ends first. */
export function instantsFrom(cronTime: CronSteps, zone: string | undefined, from: number, count: number): number[] {
  const instants: number[] = [];
  for (let at = nextInstant(cronTime, zone, from); at !== undefined && instants.length < count; at = nextInstant(cronTime, zone, at)) instants.push(at);
  return instants;
}

/**
 * The shortest gap between the next few fire instants (6, as far as the horizon goes); the horizon itself when fewer
 * than two are within it (a leap day on a given weekday), `undefined` when none is.
 */
export function shortestGapMs(cronTime: CronSteps, zone: string | undefined, from: number): number | undefined {
  const times = instantsFrom(cronTime, zone, from, 6);
  if (times.length === 0) return undefined;
  if (times.length === 1) return CRON_HORIZON_MS;
  return Math.min(...times.slice(1).map((t, i) => t - times[i]));
}
