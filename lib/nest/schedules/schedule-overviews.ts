import { UnknownJobError } from '../../schedules/errors/unknown-job.error';
import { scheduleOverview, type ScheduleOverview } from '../../schedules/schedule-overview';
import type { LiveScheduleRecord } from '../../schedules/schedule-record';
import type { RunRecord } from '../../schedules/run-record';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import type { ScheduleService } from './schedule.service';

/**
 * Overviews of runtime schedules as the answering node knows them: `next` fire instants of each (read with the
 * app's cron package), its newest run from the cluster's history (one read per schedule), and whether this node
 * has its handler.
 */
export async function scheduleOverviews(service: ScheduleService, records: readonly LiveScheduleRecord[], now: number, next: number): Promise<ScheduleOverview[]> {
  const here = new Set(service.jobs());
  return Promise.all(records.map(async (record) => {
    const { cron, timeZone } = record.definition;
    const trigger = CronTrigger.fromExpression(cron, timeZone);
    return scheduleOverview(record, {
      nextRuns: typeof trigger === 'string' ? [] : trigger.next(now, next),
      handledHere: here.has(record.id),
      lastRun: await lastRun(service, record.id),
    });
  }));
}

/** The newest run of a schedule's job, or `undefined` when it never ran. */
async function lastRun(service: ScheduleService, id: string): Promise<RunRecord | undefined> {
  try {
    return (await service.history(id, { limit: 1 })).runs[0];
  } catch (error) {
    if (error instanceof UnknownJobError) return undefined;
    throw error;
  }
}
