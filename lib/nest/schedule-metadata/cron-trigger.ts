import { CronCalendar, shortestGapMs } from '../../core/cron-calendar';
import { CronSchedule } from '../../core/cron-schedule';
import { loadCronTime, scheduleIntervalMs, SCHEDULE_CRON_OPTIONS } from './schedule-interval.reader';

/** The `@Cron` settings of a method, as @nestjs/schedule records them. */
interface CronSettings {
  cronTime?: unknown;
  timeZone?: string;
  utcOffset?: number;
}

const NO_CRON_PACKAGE = '@nestjs/schedule (and its cron package) cannot be loaded';

/**
 * A `@Cron` method's or a runtime schedule's {@link CronSchedule}, read with the cron package @nestjs/schedule uses
 * (from the method's metadata, or from an expression and a zone), or why it cannot be read.
 */
export class CronTrigger extends CronSchedule {
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
}

/** A `@Cron` utcOffset (minutes) as the zone cron's own timer uses for it (`UTC+05:30`). */
function utcZone(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `UTC${sign}${String(Math.trunc(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
