import { intervalTick, lateDecision, type TickTiming } from '../../lib/schedules/late-tick.rules';
import { CronTrigger } from '../../lib/nest/schedule-metadata/cron-trigger';

/**
 * A tick whose permit decision lands more than half a period after its instant is dropped, so it never starts back
 * to back with the next tick (issue 47: a decision held up by a frozen member landed at the thaw, 324 ms before the
 * next tick of a 1 s job). Times are a fake clock's, in ms.
 */
const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

/** A cron-like schedule with the given instants (sorted), as the runner builds a tick's timing from its trigger. */
function cron(instants: readonly number[], instant: number, calledAt = instant): TickTiming {
  const gaps = instants.slice(1).map((at, i) => at - instants[i]);
  return {
    instant,
    calledAt,
    shortestPeriodMs: Math.min(...gaps),
    nextInstant: (from) => instants.find((at) => at > from),
  };
}

const everySecond = Array.from({ length: 10 }, (_, i) => T0 + i * 1_000);

describe('lateDecision', () => {
  it('runs a tick decided within half its period of its instant, at the boundary too', () => {
    expect(lateDecision(cron(everySecond, T0), T0 + 3)).toBeUndefined();
    expect(lateDecision(cron(everySecond, T0), T0 + 499)).toBeUndefined();
    expect(lateDecision(cron(everySecond, T0), T0 + 500)).toBeUndefined();
  });

  it('drops a tick decided later than half its period after its instant (the decision that landed at the thaw)', () => {
    expect(lateDecision(cron(everySecond, T0), T0 + 501)).toEqual({ periodMs: 1_000, lateByMs: 501, from: 'instant' });
    // The finding: decided 676 ms after the instant, 324 ms before the next tick.
    expect(lateDecision(cron(everySecond, T0, T0 + 2), T0 + 676)).toEqual({ periodMs: 1_000, lateByMs: 676, from: 'instant' });
  });

  it('counts from the instant, not from a call its own timer made a little late', () => {
    // The call came 300 ms late (this process was busy), the decision took 250 ms: 550 ms after the instant.
    expect(lateDecision(cron(everySecond, T0, T0 + 300), T0 + 550)).toEqual({ periodMs: 1_000, lateByMs: 550, from: 'instant' });
  });

  it('takes the period from the instant to the next one, not the schedule\'s shortest gap', () => {
    // 09:00 and 17:00: 8 h to the evening run, 16 h from it to the next morning.
    const day = [T0, T0 + 8 * 3_600_000, T0 + 24 * 3_600_000, T0 + 32 * 3_600_000];
    const evening = day[1];
    expect(lateDecision(cron(day, T0), T0 + 5 * 3_600_000)).toEqual({ periodMs: 8 * 3_600_000, lateByMs: 5 * 3_600_000, from: 'instant' });
    expect(lateDecision(cron(day, evening), evening + 5 * 3_600_000)).toBeUndefined(); // 5 h of 16 h
    expect(lateDecision(cron(day, evening), evening + 9 * 3_600_000)).toMatchObject({ periodMs: 16 * 3_600_000 });
  });

  it('never asks the calendar while the decision is within a quarter of the shortest period (every steady-state tick)', () => {
    const nextInstant = jest.fn((from: number) => from + 1_000);
    const timing: TickTiming = { instant: T0, calledAt: T0, shortestPeriodMs: 1_000, nextInstant };
    expect(lateDecision(timing, T0 + 250)).toBeUndefined();
    expect(nextInstant).not.toHaveBeenCalled();
    expect(lateDecision(timing, T0 + 400)).toBeUndefined();
    expect(nextInstant).toHaveBeenCalledWith(T0);
  });

  it('runs a tick with no next instant: nothing to run back to back with', () => {
    expect(lateDecision(cron([T0 - 1_000, T0], T0), T0 + 10_000)).toBeUndefined();
  });

  it('judges a call made long after its instant (the application calling the method) from the call', () => {
    // An hourly job called at 09:40: its instant is 09:00, but only a decision that took half an hour drops it.
    const hourly = [T0, T0 + 3_600_000, T0 + 7_200_000];
    const calledAt = T0 + 40 * 60_000;
    expect(lateDecision(cron(hourly, T0, calledAt), calledAt + 5)).toBeUndefined();
    expect(lateDecision(cron(hourly, T0, calledAt), calledAt + 29 * 60_000)).toBeUndefined();
    expect(lateDecision(cron(hourly, T0, calledAt), calledAt + 31 * 60_000)).toEqual({ periodMs: 3_600_000, lateByMs: 31 * 60_000, from: 'call' });
  });

  it('judges an interval tick from when its timer fired, with the interval as its period', () => {
    expect(lateDecision(intervalTick(T0, 2_000), T0 + 1_000)).toBeUndefined();
    expect(lateDecision(intervalTick(T0, 2_000), T0 + 1_001)).toEqual({ periodMs: 2_000, lateByMs: 1_001, from: 'instant' });
  });

  it('takes the period from a real cron calendar', () => {
    const trigger = CronTrigger.fromExpression('0 0 9,17 * * *', 'UTC');
    if (typeof trigger === 'string') throw new Error(trigger);
    const morning = Date.UTC(2026, 10, 26, 9, 0, 0);
    const timing = (instant: number): TickTiming => ({
      instant, calledAt: instant, shortestPeriodMs: trigger.shortestGapMs, nextInstant: (at) => trigger.next(at, 1)[0],
    });
    expect(lateDecision(timing(morning), morning + 4 * 3_600_000 + 1)).toEqual({ periodMs: 8 * 3_600_000, lateByMs: 4 * 3_600_000 + 1, from: 'instant' });
    expect(lateDecision(timing(morning + 8 * 3_600_000), morning + 15 * 3_600_000)).toBeUndefined();
    const seconds = CronTrigger.fromExpression('* * * * * *', 'UTC');
    if (typeof seconds === 'string') throw new Error(seconds);
    expect(lateDecision({ instant: morning, calledAt: morning, shortestPeriodMs: seconds.shortestGapMs, nextInstant: (at) => seconds.next(at, 1)[0] }, morning + 676))
      .toEqual({ periodMs: 1_000, lateByMs: 676, from: 'instant' });
  });
});
