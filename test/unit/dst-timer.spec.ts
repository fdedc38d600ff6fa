import { CronJob } from 'cron';
import { CronTrigger } from '../../lib/nest/schedule-metadata/cron-trigger';

/**
 * A `@Cron` method's ticks come from the cron package's own timer (what @nestjs/schedule mounts). At a fall-back that
 * timer fires at instants the expression does not fire at: a fixed-hour job's repeated wall-clock time, or an hour
 * off. Here the real CronJob runs on a fake clock through each transition, and every tick goes through the trigger
 * as the runner does: the ticks that run are exactly the fire instants, each once, each named by when it ran.
 */
const CASES: Array<{ zone: string; cron: string; start: string; end: string; runs: string[] }> = [
  // Both 01:30s of the New York fall-back fire by the timer when it is armed inside the repeated hour: only the first runs.
  { zone: 'America/New_York', cron: '0 30 1 * * *', start: '2026-10-31T12:00:00Z', end: '2026-11-02T12:00:00Z', runs: ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'] },
  { zone: 'America/New_York', cron: '0 30 1 * * *', start: '2026-11-01T06:00:00Z', end: '2026-11-02T12:00:00Z', runs: ['2026-11-02T06:30:00.000Z'] },
  // The timer fires a Berlin 03:30 job at 02:30 CET (01:30 UTC) as well as at 03:30 CET.
  { zone: 'Europe/Berlin', cron: '0 30 3 * * *', start: '2026-10-24T12:00:00Z', end: '2026-10-26T12:00:00Z', runs: ['2026-10-25T02:30:00.000Z', '2026-10-26T02:30:00.000Z'] },
  // Started inside the repeated hour, the timer fires the second 02:30.
  { zone: 'Europe/Berlin', cron: '0 30 2 * * *', start: '2026-10-25T01:10:00Z', end: '2026-10-26T12:00:00Z', runs: ['2026-10-26T01:30:00.000Z'] },
  { zone: 'Europe/Berlin', cron: '0 30 2 * * *', start: '2026-10-24T12:00:00Z', end: '2026-10-26T12:00:00Z', runs: ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'] },
  // Spring: the skipped 02:30 runs once, at 03:00 CEST.
  { zone: 'Europe/Berlin', cron: '0 30 2 * * *', start: '2026-03-28T12:00:00Z', end: '2026-03-30T12:00:00Z', runs: ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'] },
  // A wildcard hour runs every distinct UTC instant, the repeated hour's included.
  { zone: 'Europe/Berlin', cron: '0 30 * * * *', start: '2026-10-24T23:45:00Z', end: '2026-10-25T02:45:00Z', runs: ['00:30', '01:30', '02:30'].map((t) => `2026-10-25T${t}:00.000Z`) },
];

describe("a @Cron's own timer through daylight-saving transitions", () => {
  afterEach(() => jest.useRealTimers());

  it.each(CASES)('$zone $cron from $start runs each fire instant once, named by when it ran', ({ zone, cron, start, end, runs }) => {
    const trigger = CronTrigger.fromExpression(cron, zone);
    if (typeof trigger === 'string') throw new Error(trigger);
    jest.useFakeTimers({ now: Date.parse(start) });
    const ran: Array<{ at: number; instant: number }> = [];
    const job = CronJob.from({ cronTime: cron, timeZone: zone, start: true, onTick: () => {
      const instant = trigger.instantFor(Date.now());
      if (instant !== undefined) ran.push({ at: Date.now(), instant });
    } });
    jest.advanceTimersByTime(Date.parse(end) - Date.parse(start));
    void job.stop();
    expect(ran.map((r) => new Date(r.instant).toISOString())).toEqual(runs);
    for (const r of ran) expect(r.instant).toBe(r.at);
  });
});
