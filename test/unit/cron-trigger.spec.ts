import 'reflect-metadata';
import { Cron } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { CronTrigger } from '../../lib/nest/schedule-metadata/cron-trigger';

class Jobs {
  @Cron('0 0 * * * *', { utcOffset: 330 })
  hourlyInIndia(): void {}

  @Cron('0 0 1 * * *', { timeZone: 'Europe/Berlin' })
  dailyInBerlin(): void {}

  @Cron('0 0 9,17 * * *')
  twiceADay(): void {}
}

/** When cron's own timer fires `method`'s next two ticks (what @nestjs/schedule runs), from its @Cron settings. */
function fires(cronTime: string, settings: { utcOffset?: number; timeZone?: string }): number[] {
  const job = settings.timeZone
    ? CronJob.from({ cronTime, onTick: () => undefined, start: false, timeZone: settings.timeZone })
    : CronJob.from({ cronTime, onTick: () => undefined, start: false, utcOffset: settings.utcOffset });
  return job.nextDates(2).map((d) => d.toMillis());
}

function trigger(method: keyof Jobs): CronTrigger {
  const found = CronTrigger.of(Jobs.prototype[method]);
  if (typeof found === 'string') throw new Error(found);
  return found;
}

/**
 * `@OncePerTrigger` names a tick by the cron instant it is for, the same on every node: in the zone or UTC offset
 * the `@Cron` fires in, and however late the tick runs, until the next instant.
 */
describe('CronTrigger: the instant a @Cron tick is for', () => {
  it('honours the @Cron utcOffset and timeZone: a tick names the instant it fired for', () => {
    for (const [method, cron, settings] of [
      ['hourlyInIndia', '0 0 * * * *', { utcOffset: 330 }],
      ['dailyInBerlin', '0 0 1 * * *', { timeZone: 'Europe/Berlin' }],
    ] as const) {
      for (const fired of fires(cron, settings)) {
        expect([method, new Date(trigger(method).instantFor(fired + 3)!).toISOString()]).toEqual([method, new Date(fired).toISOString()]);
        expect(trigger(method).instantFor(fired - 3)).toBe(fired); // a timer a few ms early
      }
    }
  });

  it('a late tick still names its own instant, up to the next one', () => {
    const [nine, five] = fires('0 0 9,17 * * *', {}).sort((x, y) => x - y);
    const first = Math.min(nine, five);
    const second = Math.max(nine, five);
    expect(trigger('twiceADay').instantFor(first + 7 * 3_600_000)).toBe(first); // 7 h late, more than half the 8 h gap
    expect(trigger('twiceADay').instantFor(second - 1)).toBe(second); // just before the next: early timer
    expect(trigger('dailyInBerlin').instantFor(fires('0 0 1 * * *', { timeZone: 'Europe/Berlin' })[0] + 20 * 3_600_000))
      .toBe(fires('0 0 1 * * *', { timeZone: 'Europe/Berlin' })[0]);
  });
});

describe('CronTrigger: expressions that fire rarely, within the cron package\'s horizon (8 years from now)', () => {
  it.each([
    ['yearly', '0 0 0 1 1 *', 7, '-01-01'],
    ['a leap day', '0 0 0 29 2 *', 1, '-02-29'],
  ])('%s: reads, lists the instants within the horizon (fewer than asked), and counts fires between two instants', (_what, cron, atLeast, date) => {
    const trigger = CronTrigger.fromExpression(cron, 'UTC');
    if (typeof trigger === 'string') throw new Error(trigger);
    const now = Date.now();
    const next = trigger.next(now, 10);
    expect(next.length).toBeGreaterThanOrEqual(atLeast);
    expect(next.length).toBeLessThan(10);
    expect(next.every((at) => new Date(at).toISOString().slice(4, 10) === date)).toBe(true);
    expect(trigger.firesBetween(now, next[0] + 1)).toEqual({ count: 1, last: next[0] });
    expect(trigger.instantFor(next[0] + 5_000)).toBe(next[0]);
  });
});

describe('CronTrigger: the grid its fire instants lie on (what the slot ledger steps by)', () => {
  const grid = (expression: string, zone = 'UTC') => (CronTrigger.fromExpression(expression, zone) as CronTrigger).gridMs;

  it('is the step of the second and minute fields, when it divides half an hour', () => {
    expect(grid('* * * * * *')).toBe(1_000);
    expect(grid('*/10 * * * * *')).toBe(10_000);
    expect(grid('5,35 * * * * *')).toBe(30_000);
    expect(grid('0 * * * * *')).toBe(60_000);
    expect(grid('0 */5 9-17 * * 1-5', 'Europe/Berlin')).toBe(300_000);
    expect(grid('0 7,22 * * * *')).toBe(900_000);
    // An hour or more: a zone that shifts by half an hour (Lord Howe) would move it, so none is claimed.
    expect(grid('0 0 * * * *')).toBeUndefined();
    expect(grid('0 30 2 * * *', 'Europe/Berlin')).toBeUndefined();
  });

  it('holds across a daylight-saving shift: every fire instant of a day of it is a whole number of steps apart', () => {
    for (const [expression, zone, from] of [['0 */5 * * * *', 'Europe/Berlin', Date.UTC(2026, 9, 24, 22)], ['*/10 * * * * *', 'Australia/Lord_Howe', Date.UTC(2026, 3, 4, 14, 30)]] as const) {
      const trigger = CronTrigger.fromExpression(expression, zone) as CronTrigger;
      const fires = trigger.next(from, 400);
      for (const at of fires) expect((at - fires[0]) % trigger.gridMs!).toBe(0);
    }
  });
});
