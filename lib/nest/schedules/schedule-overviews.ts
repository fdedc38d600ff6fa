import type { HistoryStore, StoredHistory } from '../../schedules/history-store';
import { readableHistory } from '../../schedules/job-history.rules';
import { scheduleOverview, type ScheduleOverview } from '../../schedules/schedule-overview';
import type { LiveScheduleRecord } from '../../schedules/schedule-record';
import type { RunRecord } from '../../schedules/run-record';
import { CRON_HORIZON_NOTE } from '../../core/cron-calendar';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import type { SchedulesRuntime } from './schedules.runtime';

/** Distinct (expression, zone) pairs whose fire instants are kept; past it the cache starts over. */
const MAX_CACHED = 10_000;

/** Per expression and zone: its trigger (none when the expression cannot be read here) and fire instants computed. */
const cache = new Map<string, { readonly trigger?: CronTrigger; upcoming: number[] }>();

/**
 * The next `count` fire instants of `cron` in `zone` after `now`. Reading an expression and stepping it with the cron
 * package costs milliseconds each (tens for a sparse one), and a listing is asked every few seconds by the console:
 * so triggers are kept per (expression, zone), and so are the instants computed, which stay the next ones until
 * `now` passes them.
 */
function nextRuns(cron: string, zone: string, now: number, count: number): { nextRuns: number[]; nextRunsNote?: string } {
  const key = `${zone}\u0000${cron}`;
  let entry = cache.get(key);
  if (!entry) {
    if (cache.size >= MAX_CACHED) cache.clear();
    const trigger = CronTrigger.fromExpression(cron, zone);
    entry = { trigger: typeof trigger === 'string' ? undefined : trigger, upcoming: [] };
    cache.set(key, entry);
  }
  if (!entry.trigger) return { nextRuns: [] };
  // Instants computed from an earlier moment that are still ahead are exactly the next ones from now.
  const ahead = entry.upcoming.filter((at) => at > now);
  if (ahead.length >= count) return { nextRuns: ahead.slice(0, count) };
  entry.upcoming = entry.trigger.next(now, count);
  return entry.upcoming.length < count ? { nextRuns: entry.upcoming, nextRunsNote: CRON_HORIZON_NOTE } : { nextRuns: entry.upcoming };
}

/**
 * Overviews of runtime schedules as the answering node knows them: `next` fire instants of each (read with the
 * app's cron package), its newest run (the cluster's history, read for every schedule in one call, and this node's
 * runs not written yet), and whether this node has its handler.
 */
export async function scheduleOverviews(runtime: SchedulesRuntime, records: readonly LiveScheduleRecord[], now: number, next: number, timeoutMs: number): Promise<ScheduleOverview[]> {
  await runtime.connect();
  const histories = await readHistories(runtime.store, records.map((record) => record.id), timeoutMs);
  return records.map((record) => {
    const { cron, timeZone } = record.definition;
    return scheduleOverview(record, {
      ...(record.definition.paused ? { nextRuns: [] } : nextRuns(cron, timeZone, now, next)),
      handledHere: runtime.jobs.get(record.id) !== undefined,
      lastRun: lastRun(runtime, record.id, histories.get(record.id)),
    });
  });
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
function lastRun(runtime: SchedulesRuntime, id: string, stored: StoredHistory | undefined): RunRecord | undefined {
  const [written] = stored ? readableHistory(stored.history).runs : [];
  const [here] = runtime.recorder.unwritten(id);
  // A run in both is newer here (ended, not written yet): ties go to this node's record.
  return here && (!written || here.startedAt >= written.startedAt) ? here : written;
}
