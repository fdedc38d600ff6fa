import type { ScheduleDefinition } from './schedule-definition';
import type { LiveScheduleRecord } from './schedule-record';
import type { RunRecord } from './run-record';

/**
 * A runtime schedule as operators see it (the admin API's `GET schedules`, the console's Schedules panel): the
 * stored record with its next fire instants, its newest run from the job history (kept under the schedule's id),
 * and whether the answering node has its handler.
 */
export interface ScheduleOverview {
  /** The schedule's id (also its job name in the history). */
  readonly id: string;
  /** The revision an edit names as `expectedRevision`. */
  readonly revision: number;
  /** When the last change was written (epoch ms, the writer's clock). */
  readonly updatedAt: number;
  /** Who wrote the last change (a node's acquirer name, or `cli@<host>`). */
  readonly updatedBy: string;
  /** The definition as stored, every default filled in. */
  readonly definition: ScheduleDefinition;
  /** Its next fire instants (epoch ms): none while it is paused, or when its expression cannot be read here. */
  readonly nextRuns: number[];
  /** Why `nextRuns` has fewer instants than asked for (the cron package's horizon ended first). */
  readonly nextRunsNote?: string;
  /** Whether the answering node has its `@ScheduleHandler` (it takes part in the schedule). */
  readonly handledHere: boolean;
  /** Its newest run, as the cluster's history has it. */
  readonly lastRun?: RunRecord;
}

/** An overview of `record`: what the answering node knows besides the record itself. */
export function scheduleOverview(record: LiveScheduleRecord, known: { nextRuns: number[]; nextRunsNote?: string; handledHere: boolean; lastRun?: RunRecord }): ScheduleOverview {
  return {
    id: record.id,
    revision: record.revision,
    updatedAt: record.updatedAt,
    updatedBy: record.updatedBy,
    definition: record.definition,
    nextRuns: record.definition.paused ? [] : known.nextRuns,
    ...(!record.definition.paused && known.nextRunsNote !== undefined && { nextRunsNote: known.nextRunsNote }),
    handledHere: known.handledHere,
    ...(known.lastRun && { lastRun: known.lastRun }),
  };
}
