import { loadCronTime, scheduleIntervalMs, SCHEDULE_CRON_OPTIONS } from './schedule-interval.reader';

/** The `@Cron` settings of a method, as @nestjs/schedule records them. */
interface CronSettings {
  cronTime?: unknown;
  timeZone?: string;
  utcOffset?: number;
}

/**
 * A `@Cron` method's schedule, to name each trigger the same on every node: the scheduled instant nearest to the
 * moment a tick fires. Nodes that fire one trigger (each late by its own timer and clock, far less than half the
 * gap between two triggers) all name the same instant.
 */
export class CronTrigger {
  private constructor(
    private readonly cronTime: { getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number } },
    private readonly halfGapMs: number,
    private readonly timeZone: string | undefined,
  ) {}

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
      const cronTime = new CronTime(settings.cronTime, settings.timeZone ?? null, settings.timeZone ? null : (settings.utcOffset ?? null));
      return new CronTrigger(cronTime, gapMs / 2, settings.timeZone);
    } catch (error) {
      return `its cron expression ${JSON.stringify(settings.cronTime)} cannot be read: ${(error as Error).message}`;
    }
  }

  /** The scheduled instant nearest to `now` (epoch ms). */
  instantNear(now: number): number {
    return this.cronTime.getNextDateFrom(new Date(now - this.halfGapMs), this.timeZone).toMillis();
  }
}
