import { CRON_HORIZON_NOTE } from '../core/cron-calendar';
import type { HistoryStore, StoredHistory } from './history-store';
import { readableHistory } from './job-history.rules';
import type { RunRecord } from './run-record';
import type { JobCalendar } from './run/scheduled-job';
import type { ScheduleDefinition } from './schedule-definition';
import type { LiveScheduleRecord } from './schedule-record';

/** Distinct (expression, zone) pairs whose fire instants are kept; past it the cache starts over. */
const MAX_CACHED = 10_000;

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

/** What overviews are read from: the cluster's history, this node's unwritten runs and jobs, the app's cron package. */
export interface ScheduleOverviewSources {
  readonly store: HistoryStore;
  /** Runs of a job this node has not written yet, newest first. */
  unwritten(job: string): RunRecord[];
  /** Whether this node has the schedule's handler. */
  handledHere(id: string): boolean;
  /** The calendar of an expression in a zone, or why it cannot be read here. */
  calendar(cron: string, timeZone: string): JobCalendar | string;
  /** The deadline of one store call. */
  readonly timeoutMs: number;
}

/** Per expression and zone: its calendar (none when the expression cannot be read here) and fire instants computed. */
const cache = new Map<string, { readonly calendar?: JobCalendar; upcoming: number[] }>();

/**
 * Overviews of runtime schedules as the answering node knows them: `next` fire instants of each, its newest run (the
 * cluster's history, read for every schedule in one call, and this node's runs not written yet), and whether this
 * node has its handler.
 */
export async function scheduleOverviews(records: readonly LiveScheduleRecord[], sources: ScheduleOverviewSources, now: number, next: number): Promise<ScheduleOverview[]> {
  const histories = await readHistories(sources.store, records.map((record) => record.id), sources.timeoutMs);
  return records.map((record) => {
    const { cron, timeZone } = record.definition;
    return scheduleOverview(record, {
      ...(record.definition.paused ? { nextRuns: [] } : nextRuns(sources, cron, timeZone, now, next)),
      handledHere: sources.handledHere(record.id),
      lastRun: lastRun(sources.unwritten(record.id), histories.get(record.id)),
    });
  });
}

/**
 * The next `count` fire instants of `cron` in `zone` after `now`. Reading an expression and stepping it with the cron
 * package costs milliseconds each (tens for a sparse one), and a listing is asked every few seconds by the console:
 * so calendars are kept per (expression, zone), and so are the instants computed, which stay the next ones until
 * `now` passes them.
 */
function nextRuns(sources: ScheduleOverviewSources, cron: string, zone: string, now: number, count: number): { nextRuns: number[]; nextRunsNote?: string } {
  const key = `${zone}\u0000${cron}`;
  let entry = cache.get(key);
  if (!entry) {
    if (cache.size >= MAX_CACHED) cache.clear();
    const calendar = sources.calendar(cron, zone);
    entry = { calendar: typeof calendar === 'string' ? undefined : calendar, upcoming: [] };
    cache.set(key, entry);
  }
  if (!entry.calendar) return { nextRuns: [] };
  // Instants computed from an earlier moment that are still ahead are exactly the next ones from now.
  const ahead = entry.upcoming.filter((at) => at > now);
  if (ahead.length >= count) return { nextRuns: ahead.slice(0, count) };
  entry.upcoming = entry.calendar.next(now, count);
  return entry.upcoming.length < count ? { nextRuns: entry.upcoming, nextRunsNote: CRON_HORIZON_NOTE } : { nextRuns: entry.upcoming };
}

/**
 * The histories of `jobs`: one call on a store that reads many at once (a console polling a thousand schedules
 * every few seconds would otherwise make hundreds of reads a second), else one read per job.
 */
async function readHistories(store: HistoryStore, jobs: readonly string[], timeoutMs: number): Promise<Map<string, StoredHistory>> {
  if (store.readMany) return store.readMany(jobs, timeoutMs);
  const read = await Promise.all(jobs.map(async (job) => [job, await store.read(job, timeoutMs)] as const));
  return new Map(read.filter((entry): entry is readonly [string, StoredHistory] => entry[1] !== undefined));
}

/** The newest run of a schedule's job, or `undefined` when it never ran. */
function lastRun(unwritten: readonly RunRecord[], stored: StoredHistory | undefined): RunRecord | undefined {
  const [written] = stored ? readableHistory(stored.history).runs : [];
  const [here] = unwritten;
  // A run in both is newer here (ended, not written yet): ties go to this node's record.
  return here && (!written || here.startedAt >= written.startedAt) ? here : written;
}
