import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { emptyHistory } from '../../lib/schedules/job-history';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { RunRecord } from '../../lib/schedules/run-record';
import type { LiveScheduleRecord } from '../../lib/schedules/schedule-record';
import { scheduleOverviews, type ScheduleOverviewSources } from '../../lib/schedules/schedule-overview';
import type { HistoryStore } from '../../lib/schedules/history-store';
import { CronTrigger } from '../../lib/nest/schedule-metadata/cron-trigger';

const record = (id: string, cron: string, paused = false): LiveScheduleRecord => ({
  id, revision: 7, updatedAt: 0, updatedBy: 'node-a', writeId: 'w',
  definition: {
    id, cron, timeZone: 'Europe/Berlin', handler: 'h', data: null, paused, semaphore: `schedule:${id}`, permits: 1, durationMs: 10_000,
    groupPattern: '.*', acquirerPattern: '.*', missedRuns: 'skip', overlap: 'skip',
  },
});

const run = (id: string, startedAt: number, outcome: RunRecord['outcome']): RunRecord => ({ id, job: 's', trigger: 'schedule', node: 'node-a', instance: 'i', token: 1, startedAt, outcome });

/** Sources with `stored` as the cluster's runs of every job and `here` as this node's unwritten ones. */
function sources(stored: RunRecord[], here: RunRecord[], handled: string[] = []): ScheduleOverviewSources {
  return {
    handledHere: (id) => handled.includes(id),
    store: { read: async (job: string) => (stored.length ? { raw: '', history: { ...emptyHistory(job), runs: stored } } : undefined) } as unknown as HistoryStore,
    unwritten: () => here,
    calendar: (cron, zone) => CronTrigger.fromExpression(cron, zone),
    timeoutMs: 1000,
  };
}

describe('schedule overviews', () => {
  const T = Date.UTC(2026, 5, 1, 10, 0, 0, 200);

  it('gives the next fire instants after now, never one that passed, however often it is asked', async () => {
    const every2s = record('s', '*/2 * * * * *');
    const [first] = await scheduleOverviews([every2s], sources([], []), T, 10);
    expect(first.nextRuns).toEqual(Array.from({ length: 10 }, (_, i) => Date.UTC(2026, 5, 1, 10, 0, 2 + 2 * i)));
    // Later, with fewer asked: the instants still ahead, from the first one after now.
    for (const later of [T + 1_900, T + 2_500, T + 30_000]) {
      const [again] = await scheduleOverviews([every2s], sources([], []), later, 3);
      expect(again.nextRuns[0]).toBeGreaterThan(later);
      expect(again.nextRuns[0] - later).toBeLessThanOrEqual(2_000);
      expect(again.nextRuns).toEqual([0, 1, 2].map((i) => again.nextRuns[0] + 2_000 * i));
    }
    // More than were computed: computed again.
    const [many] = await scheduleOverviews([every2s], sources([], []), T + 31_000, 12);
    expect(many.nextRuns).toHaveLength(12);
    expect(many.nextRuns[0]).toBe(Date.UTC(2026, 5, 1, 10, 0, 32));
  });

  it('gives none while paused or for an expression the cron package cannot read, and says whether this node has the handler', async () => {
    const [paused, unreadable, daily] = await scheduleOverviews([record('paused', '* * * * * *', true), record('bad', '0 99 * * *'), record('daily', '0 30 2 * * *')], sources([], [], ['daily']), T, 2);
    expect([paused.nextRuns, unreadable.nextRuns]).toEqual([[], []]);
    expect(daily.nextRuns).toEqual([Date.UTC(2026, 5, 2, 0, 30), Date.UTC(2026, 5, 3, 0, 30)]); // 02:30 in Berlin (summer)
    expect([paused.handledHere, daily.handledHere]).toEqual([false, true]);
  });

  it("takes the newest run of the cluster's history and this node's unwritten runs", async () => {
    const s = [record('s', '0 30 2 * * *')];
    const written = run('r1', T - 5_000, 'completed');
    const ended = run('r2', T - 1_000, 'failed');
    expect((await scheduleOverviews(s, sources([written], []), T, 1))[0].lastRun).toEqual(written);
    expect((await scheduleOverviews(s, sources([written], [ended]), T, 1))[0].lastRun).toEqual(ended);
    expect((await scheduleOverviews(s, sources([{ ...ended, outcome: 'running' }], [ended]), T, 1))[0].lastRun).toEqual(ended);
    expect((await scheduleOverviews(s, sources([ended], [written]), T, 1))[0].lastRun).toEqual(ended);
    expect((await scheduleOverviews(s, sources([], []), T, 1))[0].lastRun).toBeUndefined();
  });

  it('reads the newest runs of many schedules in one store call, each its own, when the store reads many at once', async () => {
    const store = new HistoryRecordStore(new MemoryBackend());
    await store.connect();
    const ids = Array.from({ length: 50 }, (_, i) => `s${i}`);
    for (const [i, id] of ids.entries()) {
      if (i % 5 === 4) continue; // some never ran
      await store.write(id, undefined, { ...emptyHistory(id), runs: [{ ...run(`${id}-r`, T - i, 'completed'), job: id }] });
    }
    const rt = { ...sources([], []), store };
    const before = store.operationCount();
    const overviews = await scheduleOverviews(ids.map((id) => record(id, '0 30 2 * * *')), rt, T, 1);
    expect(store.operationCount() - before).toBe(1);
    expect(overviews.map((o) => o.lastRun?.id)).toEqual(ids.map((id, i) => (i % 5 === 4 ? undefined : `${id}-r`)));
  });
});
