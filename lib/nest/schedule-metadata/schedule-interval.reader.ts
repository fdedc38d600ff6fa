import { createRequire } from 'node:module';
import { CronCalendar, shortestGapMs, type CronSteps } from '../../core/cron-calendar';

/* The schedule metadata @nestjs/schedule records on a method (its own keys), read to check release-mode settings. */
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
export const SCHEDULE_CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';
const SCHEDULE_INTERVAL_OPTIONS = 'SCHEDULE_INTERVAL_OPTIONS';
/** Its `SchedulerType` enum values (not exported from the package's entry point). */
const CRON = 1;
const INTERVAL = 3;

/** The part of `cron`'s CronTime this library uses. */
export type CronTimeClass = new (source: string | Date, timeZone?: string | null, utcOffset?: number | null) => CronSteps;

/**
 * The shortest time between two ticks of a `@Cron` or `@Interval` method, in ms, or `undefined` when it has none
 * or it cannot be told. Cron expressions are read with the `cron` package @nestjs/schedule itself uses.
 */
export function scheduleIntervalMs(method: object): number | undefined {
  const type = Reflect.getMetadata(SCHEDULER_TYPE, method) as number | undefined;
  if (type === INTERVAL) return intervalMs(method);
  if (type !== CRON) return undefined;
  const cronTime = (Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, method) as { cronTime?: string | Date } | undefined)?.cronTime;
  const CronTime = loadCronTime();
  if (!CronTime || typeof cronTime !== 'string') return undefined;
  try {
    return shortestGapMs(new CronCalendar(new CronTime(cronTime), undefined), Date.now());
  } catch {
    return undefined;
  }
}

/** The period of an `@Interval` method, in ms; `undefined` for any other method. */
export function intervalMs(method: object): number | undefined {
  if (Reflect.getMetadata(SCHEDULER_TYPE, method) !== INTERVAL) return undefined;
  const interval = (Reflect.getMetadata(SCHEDULE_INTERVAL_OPTIONS, method) as { timeout?: number } | undefined)?.timeout;
  return typeof interval === 'number' && interval > 0 ? interval : undefined;
}

/**
 * `cron`'s CronTime, resolved from where @nestjs/schedule is, or `undefined` without it: @nestjs/schedule is an
 * optional peer (only @Cron/@Interval methods need it, and then it is there), never imported by this library.
 */
export function loadCronTime(): CronTimeClass | undefined {
  try {
    const fromSchedule = createRequire(require.resolve('@nestjs/schedule'));
    return (fromSchedule('cron') as { CronTime: CronTimeClass }).CronTime;
  } catch {
    return undefined;
  }
}
