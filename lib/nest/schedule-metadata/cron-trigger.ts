import { CronCalendar, shortestGapMs } from '../../core/cron-calendar';
import { loadCronTime, scheduleIntervalMs, SCHEDULE_CRON_OPTIONS } from './schedule-interval.reader';

/** The `@Cron` settings of a method, as @nestjs/schedule records them. */
interface CronSettings {
  cronTime?: unknown;
  timeZone?: string;
  utcOffset?: number;
}

const NO_CRON_PACKAGE = '@nestjs/schedule (and its cron package) cannot be loaded';

/** How early a tick may fire by the clock it reads (timer rounding): it still names its own instant. */
const EARLY_TICK_MS = 1_000;

/**
 * How late the cron package's timer may fire and still be told for the proposal it was set for. A tick at a proposal
 * that is not a fire instant (see {@link CronCalendar}) is dropped within this; later than that, a call is named by the
 * newest fire instant before it, as a direct call is.
 */
const TIMER_LATENESS_MS = 60_000;

/**
 * A `@Cron` method's schedule, to name each trigger the same on every node: the latest scheduled instant at (or just
 * before) the moment a tick fires. Each node's cron fires by its own clock, so every node names the same instant
 * however late its tick runs (a blocked event loop, a slow start), as long as the next instant has not come.
 */
export class CronTrigger {
  private constructor(
    private readonly calendar: CronCalendar,
    private readonly gapMs: number,
    private readonly zone: string | undefined,
    /** The cron expression, as written. */
    readonly expression: string,
  ) {}

  /** The shortest time between two fire instants (ms). */
  get shortestGapMs(): number {
    return this.gapMs;
  }

  /** The time zone it fires in (`UTC+05:30` for a `utcOffset`); `undefined`: the process's zone. */
  get timeZone(): string | undefined {
    return this.zone;
  }

  /**
   * The fire instants strictly after `after` and strictly before `before`: how many (counting stops at `cap`) and
   * the newest.
   */
  firesBetween(after: number, before: number, cap = 10_000): { count: number; last?: number } {
    const next = (from: number) => this.calendar.next(from);
    let count = 0;
    let last: number | undefined;
    for (let at = next(after); at !== undefined && at < before; at = next(at)) {
      last = at;
      if (++count >= cap) {
        // Too many to count: the newest is found from just before `before` (a few of the shortest gaps back).
        for (let near = next(Math.max(at, before - 4 * this.gapMs)); near !== undefined && near < before; near = next(near)) last = near;
        break;
      }
    }
    return { count, last };
  }

  /**
   * The next `count` fire instants after `from` (epoch ms): fewer when the cron package's horizon (8 years from now)
   * ends first, as for a yearly or leap-day expression (see `CRON_HORIZON_NOTE`).
   */
  next(from: number, count: number): number[] {
    return this.calendar.list(from, count);
  }

  /** The trigger of a cron expression in a time zone (a runtime schedule's), or why it cannot be read. */
  static fromExpression(expression: string, timeZone: string): CronTrigger | string {
    const read = CronTrigger.read(expression, timeZone);
    if (!('problem' in read)) return read.trigger;
    if (read.problem === NO_CRON_PACKAGE) return read.problem;
    const what = `the cron expression ${JSON.stringify(expression)} in ${timeZone}`;
    return read.unreadable ? `${what} cannot be read: ${read.problem}` : `${what} ${read.problem}`;
  }

  /**
   * A runtime schedule's `CronValidator`: what is wrong with the expression in the zone, in the cron package's words
   * and without naming the expression again (the schedule's error names it), or `undefined` when it fires.
   */
  static validate(expression: string, timeZone: string): string | undefined {
    const read = CronTrigger.read(expression, timeZone);
    return 'problem' in read ? read.problem : undefined;
  }

  private static read(expression: string, timeZone: string): { trigger: CronTrigger } | { problem: string; unreadable?: true } {
    const CronTime = loadCronTime();
    if (!CronTime) return { problem: NO_CRON_PACKAGE };
    try {
      const calendar = new CronCalendar(new CronTime(expression, timeZone), timeZone);
      const gapMs = shortestGapMs(calendar, Date.now());
      if (gapMs === undefined) return { problem: 'fires at no instant within the next 8 years' };
      return { trigger: new CronTrigger(calendar, gapMs, timeZone, expression) };
    } catch (error) {
      return { problem: (error as Error).message, unreadable: true };
    }
  }

  /**
   * What is wrong with a `@Cron` method's settings that the cron package will refuse when @nestjs/schedule mounts it
   * (an expression it cannot read, an unknown time zone), in words naming them; `undefined` when nothing is (or it has
   * no cron expression, or the package cannot be loaded).
   */
  static problemOf(method: object): { readonly field: 'cronTime' | 'timeZone'; readonly reason: string } | undefined {
    const settings = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, method) as CronSettings | undefined;
    const CronTime = loadCronTime();
    if (!settings || typeof settings.cronTime !== 'string' || !CronTime) return undefined;
    try {
      new CronTime(settings.cronTime, settings.timeZone ?? null, settings.timeZone ? null : (settings.utcOffset ?? null));
      return undefined;
    } catch (error) {
      const message = (error as Error).message;
      return /time ?zone/i.test(message)
        ? { field: 'timeZone', reason: `the cron package does not know the time zone ${JSON.stringify(settings.timeZone)} (${message})` }
        : { field: 'cronTime', reason: `the cron package cannot read ${JSON.stringify(settings.cronTime)}: ${message}` };
    }
  }

  /** The trigger of a `@Cron` method (a cron expression), or a reason why it has none. */
  static of(method: object): CronTrigger | string {
    const settings = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, method) as CronSettings | undefined;
    if (!settings) return 'it has no @Cron schedule (put @Cron above or below it)';
    if (typeof settings.cronTime !== 'string') return 'its @Cron is not a cron expression (a Date fires once: submit a task by name instead)';
    const CronTime = loadCronTime();
    if (!CronTime) return '@nestjs/schedule (and its cron package) cannot be loaded';
    const gapMs = scheduleIntervalMs(method);
    if (gapMs === undefined) return `its cron expression ${JSON.stringify(settings.cronTime)} cannot be read`;
    try {
      const offset = settings.timeZone ? null : (settings.utcOffset ?? null);
      const zone = settings.timeZone ?? (offset === null ? undefined : utcZone(offset));
      const calendar = new CronCalendar(new CronTime(settings.cronTime, settings.timeZone ?? null, offset), zone);
      return new CronTrigger(calendar, gapMs, zone, settings.cronTime);
    } catch (error) {
      return `its cron expression ${JSON.stringify(settings.cronTime)} cannot be read: ${(error as Error).message}`;
    }
  }

  /**
   * The scheduled instant a call at `now` (epoch ms) is for: the newest fire instant at or before it. `undefined` for
   * a tick of the cron package's own timer at an instant it proposed that is not a fire instant (at a daylight-saving
   * fall-back: a repeated wall-clock time of a fixed-hour job, or an hour off): that tick is not one.
   */
  instantFor(now: number): number | undefined {
    const last = now + Math.min(EARLY_TICK_MS, this.gapMs / 2);
    const proposal = this.calendar.proposedAtOrBefore(last, Math.min(this.gapMs, TIMER_LATENESS_MS));
    if (proposal) return proposal.fires ? proposal.instant : undefined;
    // Back from the tick a gap at a time (the shortest gap: some may be longer) until an instant is found, then on.
    const next = (from: number) => this.calendar.next(from) ?? Number.POSITIVE_INFINITY;
    for (let from = last - this.gapMs; ; from -= this.gapMs) {
      let instant = next(from);
      if (instant > last) continue;
      for (let after = next(instant); after <= last; after = next(instant)) instant = after;
      return instant;
    }
  }
}

/** A `@Cron` utcOffset (minutes) as the zone cron's own timer uses for it (`UTC+05:30`). */
function utcZone(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `UTC${sign}${String(Math.trunc(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
