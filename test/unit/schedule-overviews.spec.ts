import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { emptyHistory } from '../../lib/schedules/job-history';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { RunRecord } from '../../lib/schedules/run-record';
import type { LiveScheduleRecord } from '../../lib/schedules/schedule-record';
import { scheduleOverviews } from '../../lib/nest/schedules/schedule-overviews';
import type { SchedulesRuntime } from '../../lib/nest/schedules/schedules.runtime';

const record = (id: string, cron: string, paused = false): LiveScheduleRecord => ({
  id, revision: 7, updatedAt: 0, updatedBy: 'node-a', writeId: 'w',
  definition: {
    id, cron, timeZone: 'Europe/Berlin', handler: 'h', data: null, paused, semaphore: `schedule:${id}`, permits: 1, durationMs: 10_000,
    groupPattern: '.*', acquirerPattern: '.*', missedRuns: 'skip', overlap: 'skip',
  },
});

const run = (id: string, startedAt: number, outcome: RunRecord['outcome']): RunRecord => ({ id, job: 's', trigger: 'schedule', node: 'node-a', instance: 'i', token: 1, startedAt, outcome });

/** A runtime with `stored` as the cluster's runs of every job and `here` as this node's unwritten ones. */
function runtime(stored: RunRecord[], here: RunRecord[], handled: string[] = []): SchedulesRuntime {
  return {
    connect: async () => undefined,
    jobs: { get: (name: string) => (handled.includes(name) ? {} : undefined) },
    store: { read: async (job: string) => (stored.length ? { raw: '', history: { ...emptyHistory(job), runs: stored } } : undefined) },
    recorder: { unwritten: () => here },
  } as unknown as SchedulesRuntime;
}

describe('schedule overviews', () => {
  const T = Date.UTC(2026, 5, 1, 10, 0, 0, 200);

  it('gives the next fire instants after now, never one that passed, however often it is asked', async () => {
    const every2s = record('s', '*/2 * * * * *');
    const [first] = await scheduleOverviews(runtime([], []), [every2s], T, 10, 1000);
    expect(first.nextRuns).toEqual(Array.from({ length: 10 }, (_, i) => Date.UTC(2026, 5, 1, 10, 0, 2 + 2 * i)));
    // Later, with fewer asked: the instants still ahead, from the first one after now.
    for (const later of [T + 1_900, T + 2_500, T + 30_000]) {
      const [again] = await scheduleOverviews(runtime([], []), [every2s], later, 3, 1000);
      expect(again.nextRuns[0]).toBeGreaterThan(later);
      expect(again.nextRuns[0] - later).toBeLessThanOrEqual(2_000);
      expect(again.nextRuns).toEqual([0, 1, 2].map((i) => again.nextRuns[0] + 2_000 * i));
    }
    // More than were computed: computed again.
    const [many] = await scheduleOverviews(runtime([], []), [every2s], T + 31_000, 12, 1000);
    expect(many.nextRuns).toHaveLength(12);
    expect(many.nextRuns[0]).toBe(Date.UTC(2026, 5, 1, 10, 0, 32));
  });

  it('gives none while paused or for an expression the cron package cannot read, and says whether this node has the handler', async () => {
    const [paused, unreadable, daily] = await scheduleOverviews(runtime([], [], ['daily']), [record('paused', '* * * * * *', true), record('bad', '0 99 * * *'), record('daily', '0 30 2 * * *')], T, 2, 1000);
    expect([paused.nextRuns, unreadable.nextRuns]).toEqual([[], []]);
    expect(daily.nextRuns).toEqual([Date.UTC(2026, 5, 2, 0, 30), Date.UTC(2026, 5, 3, 0, 30)]); // 02:30 in Berlin (summer)
    expect([paused.handledHere, daily.handledHere]).toEqual([false, true]);
  });

  it("takes the newest run of the cluster's history and this node's unwritten runs", async () => {
    const s = [record('s', '0 30 2 * * *')];
    const written = run('r1', T - 5_000, 'completed');
    const ended = run('r2', T - 1_000, 'failed');
    expect((await scheduleOverviews(runtime([written], []), s, T, 1, 1000))[0].lastRun).toEqual(written);
    expect((await scheduleOverviews(runtime([written], [ended]), s, T, 1, 1000))[0].lastRun).toEqual(ended);
    expect((await scheduleOverviews(runtime([{ ...ended, outcome: 'running' }], [ended]), s, T, 1, 1000))[0].lastRun).toEqual(ended);
    expect((await scheduleOverviews(runtime([ended], [written]), s, T, 1, 1000))[0].lastRun).toEqual(ended);
    expect((await scheduleOverviews(runtime([], []), s, T, 1, 1000))[0].lastRun).toBeUndefined();
  });

  it('reads the newest runs of many schedules in one store call, each its own, when the store reads many at once', async () => {
    const store = new HistoryRecordStore(new MemoryBackend());
    await store.connect();
    const ids = Array.from({ length: 50 }, (_, i) => `s${i}`);
    for (const [i, id] of ids.entries()) {
      if (i % 5 === 4) continue; // some never ran
      await store.write(id, undefined, { ...emptyHistory(id), runs: [{ ...run(`${id}-r`, T - i, 'completed'), job: id }] });
    }
    const rt = { ...runtime([], []), store } as unknown as SchedulesRuntime;
    const before = store.operationCount();
    const overviews = await scheduleOverviews(rt, ids.map((id) => record(id, '0 30 2 * * *')), T, 1, 1000);
    expect(store.operationCount() - before).toBe(1);
    expect(overviews.map((o) => o.lastRun?.id)).toEqual(ids.map((id, i) => (i % 5 === 4 ? undefined : `${id}-r`)));
  });
});
