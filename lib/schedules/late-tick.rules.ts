/*
 * When a scheduled run comes too late to start (pure: the decision's time passed in). A tick whose permit decision
 * was held up (a frozen store member answers every call queued during the freeze at the thaw) would otherwise start
 * its run back to back with the next tick: two starts of one job within a fraction of its period. Such a run is
 * dropped; the next tick is the job's next run. Only scheduled ticks are judged: a run now has no period, and a
 * catch-up is late by design.
 */

/** The skip reason of a tick whose decision landed more than half a period after its instant. */
export const LATE_DECISION = 'LATE_DECISION';

/** A scheduled tick, as the rule needs it. */
export interface TickTiming {
  /** The instant the tick is for (epoch ms): a cron fire instant, or when an interval's timer fired. */
  readonly instant: number;
  /** When the call came (epoch ms): a timer's tick comes at its instant, the application calling the method at any time. */
  readonly calledAt: number;
  /**
   * The schedule's shortest time between two instants (ms), as far as it is known (a cron calendar's is taken from
   * its next few instants, so a month's may be a few days off): a decision within a quarter of it is on time without
   * asking the calendar, which every tick of the steady state would otherwise do.
   */
  readonly shortestPeriodMs: number;
  /** The schedule's first instant after `instant` (epoch ms); `undefined` when it fires no more. */
  nextInstant(instant: number): number | undefined;
}

/** Why a tick is too late to run. */
export interface LateDecision {
  /** The time from the tick's instant to the next one (ms). */
  readonly periodMs: number;
  /** How long after `from` the decision landed (ms): more than half the period. */
  readonly lateByMs: number;
  /** What the lateness counts from: the instant, or (a call that came late on its own) the call. */
  readonly from: 'instant' | 'call';
}

/**
 * Whether a tick whose permit decision landed at `decidedAt` is too late to run: later than half its period (the gap
 * from its instant to the next) after its instant. A call that itself came more than half a period after its instant
 * (the application calling a `@Cron` method at some other time, for which the instant only names the run) is judged
 * from the call instead, so only a decision that took that long drops it. `undefined`: on time, run it.
 */
export function lateDecision(tick: TickTiming, decidedAt: number): LateDecision | undefined {
  const { instant, calledAt, shortestPeriodMs } = tick;
  const half = (periodMs: number) => periodMs / 2;
  // The cheap answer first: within a quarter of the shortest period of the instant, a decision is on time whatever the
  // period (half of it, with room for a shortest period known only roughly), and a call judged from itself came later.
  if (decidedAt - instant <= shortestPeriodMs / 4) return undefined;
  const next = tick.nextInstant(instant);
  if (next === undefined || !(next > instant)) return undefined; // no next tick to run back to back with
  const periodMs = next - instant;
  const from = calledAt - instant > half(periodMs) ? 'call' : 'instant';
  const lateByMs = decidedAt - (from === 'call' ? calledAt : instant);
  return lateByMs > half(periodMs) ? { periodMs, lateByMs, from } : undefined;
}

/** The timing of an `@Interval` tick that fired at `calledAt`, every `intervalMs`. */
export function intervalTick(calledAt: number, intervalMs: number): TickTiming {
  return { instant: calledAt, calledAt, shortestPeriodMs: intervalMs, nextInstant: (instant) => instant + intervalMs };
}
