/** A date the `cron` package answers with (a luxon DateTime in the zone asked for), as far as this library reads it. */
export interface CronDate {
  toMillis(): number;
  /** The wall clock's hour, minute and second in the zone. */
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** The zone's offset from UTC at this instant, in minutes. */
  readonly offset: number;
  minus(duration: { milliseconds: number }): CronDate;
}

/** A `cron` CronTime, as far as stepping through its instants goes. */
export interface CronSteps {
  getNextDateFrom(start: Date, timeZone?: string): CronDate;
  /** The parsed fields, normalized: `*`, or the values joined by commas (second, minute, hour, day, month, weekday). */
  toJSON(): string[];
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

/** How many of the package's answers in a row may be refused before giving up (none is refused twice running today). */
const MAX_REFUSED = 64;

/** The wall clock goes back at most this far at a transition (a day, to be generous): repeats are looked for within it. */
const REPEAT_LOOKBACK_MS = 24 * 3600_000;

/**
 * The fire instants of a cron expression in a time zone, right across daylight saving by construction. The `cron`
 * package proposes each next instant, and a proposal is kept only when it is one:
 *
 * - its wall-clock time in the zone matches the expression's second, minute and hour (the package sometimes answers
 *   an hour off at a fall-back: `0 30 3 * * *` in Berlin at 02:30 CET);
 * - an expression whose hour field is not `*` (a fixed hour, a list, a range, a step) fires a wall-clock time once:
 *   in a repeated hour only at its first occurrence, and a time a spring gap skips at the first instant after the gap
 *   (the package itself proposes no other instant for such an expression, but its timer fires at some);
 * - an expression whose hour field is `*` fires on every distinct UTC instant whose wall-clock time matches (the
 *   repeated hour's instants are new instants; the gap's do not exist).
 *
 * Days, months and weekdays are the package's to match. An instant is an epoch ms.
 */
export class CronCalendar {
  private readonly seconds: ReadonlySet<number> | undefined;
  private readonly minutes: ReadonlySet<number> | undefined;
  private readonly hours: ReadonlySet<number> | undefined;
  /** Whether the hour field is fixed: each wall-clock time fires once, not on each of its instants. */
  readonly fixedHour: boolean;
  /**
   * A step (ms) every fire instant is a whole number of steps from every other, whatever the zone does: two fire
   * instants exactly one step apart have none between them. `undefined` when no such step of at most 30 minutes is
   * known (see {@link gridStepMs}).
   */
  readonly gridMs: number | undefined;

  constructor(
    private readonly cronTime: CronSteps,
    private readonly zone: string | undefined,
  ) {
    const [second, minute, hour] = cronTime.toJSON();
    this.seconds = valuesOf(second);
    this.minutes = valuesOf(minute);
    this.hours = valuesOf(hour);
    this.fixedHour = this.hours !== undefined;
    this.gridMs = gridStepMs(this.seconds, this.minutes);
  }

  /** The first fire instant after `from`, or `undefined` when none is within the package's horizon. */
  next(from: number): number | undefined {
    let at = from;
    for (let refused = 0; refused <= MAX_REFUSED; refused++) {
      const proposed = this.proposed(at);
      if (proposed === undefined) return undefined;
      if (this.fires(proposed)) return proposed.toMillis();
      at = proposed.toMillis();
    }
    return undefined;
  }

  /** Up to `count` fire instants after `from`: fewer when the package's horizon ends first. */
  list(from: number, count: number): number[] {
    const instants: number[] = [];
    for (let at = this.next(from); at !== undefined && instants.length < count; at = this.next(at)) instants.push(at);
    return instants;
  }

  /**
   * The newest instant the package proposes at or before `at`, and whether it is a fire instant: the package's own
   * timer (a `@Cron` method's) fires at each proposal, so a tick at a proposal that is not a fire instant is not a
   * tick. `undefined` when none is within `lookbackMs`.
   */
  proposedAtOrBefore(at: number, lookbackMs: number): { instant: number; fires: boolean } | undefined {
    let found: CronDate | undefined;
    for (let from = at - lookbackMs, next = this.proposed(from); next !== undefined && next.toMillis() <= at; next = this.proposed(next.toMillis())) found = next;
    return found && { instant: found.toMillis(), fires: this.fires(found) };
  }

  /** Whether a proposed instant is a fire instant (see the class). */
  private fires(date: CronDate): boolean {
    // With the hour a wildcard, the package's proposals are the instants (a shift moves whole hours): no check, which
    // keeps a tick of an every-second job as cheap as the package's own step.
    if (!this.fixedHour) return true;
    if (this.matches(date.hour * 3600 + date.minute * 60 + date.second)) return !(this.fixedHour && this.repeated(date));
    return this.fixedHour && this.afterSkipped(date);
  }

  /** Whether a wall-clock second of the day matches the expression's second, minute and hour. */
  private matches(secondOfDay: number): boolean {
    const hour = Math.floor(secondOfDay / 3600);
    const minute = Math.floor((secondOfDay % 3600) / 60);
    return has(this.hours, hour) && has(this.minutes, minute) && has(this.seconds, secondOfDay % 60);
  }

  /** Whether the wall-clock time of `date` was already shown once, before the clock went back. */
  private repeated(date: CronDate): boolean {
    const back = date.minus({ milliseconds: REPEAT_LOOKBACK_MS }).offset - date.offset;
    if (back <= 0) return false;
    // The same wall-clock time `back` minutes earlier, under the offset before the shift.
    return date.minus({ milliseconds: back * 60_000 }).offset - date.offset === back;
  }

  /** Whether `date` is the first instant after a spring gap that skipped a wall-clock time this expression fires at. */
  private afterSkipped(date: CronDate): boolean {
    const skipped = date.offset - date.minus({ milliseconds: 1 }).offset;
    if (skipped <= 0) return false;
    const end = date.hour * 3600 + date.minute * 60 + date.second;
    for (let s = end - skipped * 60; s < end; s++) if (this.matches((s + 86_400) % 86_400)) return true;
    return false;
  }

  /** The package's next proposal after `from`, or `undefined` past its horizon (its other errors are thrown). */
  private proposed(from: number): CronDate | undefined {
    try {
      return this.cronTime.getNextDateFrom(new Date(from), this.zone);
    } catch (error) {
      if (error instanceof Error && BEYOND_HORIZON.test(error.message)) return undefined;
      throw error;
    }
  }
}

/** The values of a normalized field, `undefined` for `*` (every value). */
function valuesOf(field: string | undefined): ReadonlySet<number> | undefined {
  return field === undefined || field === '*' ? undefined : new Set(field.split(',').map(Number));
}

function has(values: ReadonlySet<number> | undefined, value: number): boolean {
  return values === undefined || values.has(value);
}

/**
 * The grid the fire instants lie on, from the second and minute fields alone: the greatest step that divides the
 * distance between any two of the hour's wall-clock offsets (minute * 60 + second, cyclic over the hour). Days, hours
 * and a zone's daylight saving only leave out or shift whole hours (or half hours), and a zone's offset is a whole
 * minute, so every fire instant in absolute time is on the same grid when the step divides 30 minutes: otherwise
 * `undefined`.
 */
function gridStepMs(seconds: ReadonlySet<number> | undefined, minutes: ReadonlySet<number> | undefined): number | undefined {
  const secondValues = seconds ? [...seconds].sort((a, b) => a - b) : Array.from({ length: 60 }, (_, i) => i);
  const minuteValues = minutes ? [...minutes].sort((a, b) => a - b) : Array.from({ length: 60 }, (_, i) => i);
  const offsets = minuteValues.flatMap((m) => secondValues.map((s) => m * 60 + s));
  let step = 3600;
  for (let i = 0; i < offsets.length; i++) step = gcd(step, (i + 1 < offsets.length ? offsets[i + 1] : offsets[0] + 3600) - offsets[i]);
  return 1800 % step === 0 ? step * 1000 : undefined;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * The shortest gap between the next few fire instants (6, as far as the horizon goes); the horizon itself when fewer
 * than two are within it (a leap day on a given weekday), `undefined` when none is.
 */
export function shortestGapMs(calendar: CronCalendar, from: number): number | undefined {
  const times = calendar.list(from, 6);
  if (times.length === 0) return undefined;
  if (times.length === 1) return CRON_HORIZON_MS;
  return Math.min(...times.slice(1).map((t, i) => t - times[i]));
}
