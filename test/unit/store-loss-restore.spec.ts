import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { MemoryRecords } from '../../lib/backends/memory/memory-records';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { HistoryRecorder } from '../../lib/schedules/history-recorder';
import { ScheduleCatalog } from '../../lib/schedules/schedule-catalog';
import { ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';
import { restoreSchedules, type ScheduleRestoreReport } from '../../lib/schedules/schedule-restore';
import { ScheduleView } from '../../lib/schedules/schedule-view';
import { systemClock } from '../../lib/core/clock';

/**
 * A store that loses its data (the memory store's `loseData`, as a Hazelcast cluster restarted empty): nodes write
 * back the runtime schedules and the run history they hold, the newest revision winning; a record deleted from
 * outside the library (no loss) is not written back.
 */
describe('what nodes hold, written back after the store lost it', () => {
  async function twoNodes() {
    const records = new MemoryRecords();
    const stores = [new ScheduleRecordStore(new MemoryBackend({ records })), new ScheduleRecordStore(new MemoryBackend({ records }))];
    await Promise.all(stores.map((s) => s.connect()));
    const reports: ScheduleRestoreReport[] = [];
    const views = stores.map((store) => new ScheduleView(store, { restore: async (vanished) => void reports.push(await restoreSchedules(store, vanished, 1_000)) }));
    return { records, stores, views, reports, catalog: new ScheduleCatalog(stores[0], { by: 'operator' }) };
  }

  it('restores live schedules and tombstones once, across nodes restoring at once', async () => {
    const { records, stores, views, reports, catalog } = await twoNodes();
    const kept = await catalog.upsert({ id: 'keep', cron: '* * * * * *', handler: 'h', duration: '3s' });
    await catalog.upsert({ id: 'gone', cron: '* * * * * *', handler: 'h', duration: '3s' });
    const removed = await catalog.remove('gone');
    await Promise.all(views.map((v) => v.start()));
    records.loseData();
    await Promise.all(views.map((v) => v.refresh()));
    expect((await stores[1].read('keep')).record).toMatchObject({ revision: kept.revision, definition: { id: 'keep' } });
    expect((await stores[1].read('gone')).record).toMatchObject({ revision: removed.revision, definition: null });
    expect(views.map((v) => v.schedules().map((s) => s.id))).toEqual([['keep'], ['keep']]);
    // Each record written back by exactly one node; the other found it back.
    expect(reports.flatMap((r) => r.restored.map((x) => x.id)).sort()).toEqual(['gone', 'keep']);
    expect(reports.every((r) => r.lostSince !== undefined && r.failed.length === 0)).toBe(true);
  });

  it('lets an edit made since the loss stand (its revision starts above the clock)', async () => {
    const { records, stores, views, catalog } = await twoNodes();
    await catalog.upsert({ id: 'a', cron: '* * * * * *', handler: 'h', duration: '3s' });
    await views[0].start();
    records.loseData();
    const since = await new ScheduleCatalog(stores[1], { by: 'other' }).upsert({ id: 'a', cron: '*/5 * * * * *', handler: 'h', duration: '3s' });
    await views[0].refresh();
    expect((await stores[0].read('a')).record).toMatchObject({ revision: since.revision, definition: { cron: '*/5 * * * * *' } });
  });

  it('does not write back a record deleted from outside the library (nothing was lost)', async () => {
    const { records, stores, catalog } = await twoNodes();
    const { schedule } = await catalog.upsert({ id: 'a', cron: '* * * * * *', handler: 'h', duration: '3s' });
    const outside = new MemoryBackend({ records });
    await outside.open();
    await (await outside.map('schedules')).delete('a');
    const report = await restoreSchedules(stores[0], [schedule!], 1_000);
    expect(report).toMatchObject({ restored: [], deletedOutside: ['a'], lostSince: undefined });
    expect((await stores[0].read('a')).record).toBeUndefined();
  });

  it('writes back the run history a node last wrote, with the runs written since', async () => {
    const records = new MemoryRecords();
    const store = new HistoryRecordStore(new MemoryBackend({ records }));
    await store.connect();
    const lost: Array<{ lostSince: number; restored: readonly string[] }> = [];
    const recorder = new HistoryRecorder(store, { keep: 50, flushIntervalMs: 60_000, callTimeoutMs: 1_000, identity: { instance: 'i', node: 'n' }, clock: systemClock, onLost: (l) => lost.push(l) });
    for (let token = 1; token <= 3; token++) recorder.finished(recorder.started({ job: 'j', trigger: 'schedule', instant: token * 1000, token }), 'completed', 1);
    await recorder.flush();
    records.loseData();
    recorder.finished(recorder.started({ job: 'j', trigger: 'schedule', instant: 4000, token: 4 }), 'completed', 1);
    await recorder.flush();
    const history = (await store.read('j'))!.history;
    expect(history.runs.map((r) => r.instant).sort()).toEqual([1000, 2000, 3000, 4000]);
    expect(history.counts).toEqual({ completed: 4 });
    expect(lost).toEqual([{ lostSince: expect.any(Number), restored: ['j'] }]);
  });
});
