import type { CronCalendar } from './cron-calendar';

/** How early a tick may fire by the clock it reads (timer rounding): it still names its own instant. */
const EARLY_TICK_MS = 1_000;

/**
 * How late the cron package's timer may fire and still be told for the proposal it was set for. A tick at a proposal
 * that is not a fire instant (see `CronCalendar`) is dropped within this; later than that, a call is named by the
 * newest fire instant before it, as a direct call is.
 */
const TIMER_LATENESS_MS = 60_000;

/**
 * A cron schedule as a job reads it (the schedules' `JobCalendar`), to name each trigger the same on every node: the latest scheduled instant at (or just
 * before) the moment a tick fires. Each node's cron fires by its own clock, so every node names the same instant
 * however late its tick runs (a blocked event loop, a slow start), as long as the next instant has not come.
 */
export class CronSchedule {
  protected constructor(
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

  /** A step every fire instant is a whole number of from every other (see `CronCalendar.gridMs`), if one is known. */
  get gridMs(): number | undefined {
    return this.calendar.gridMs;
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
