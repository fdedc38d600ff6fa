import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { MemoryRecords } from '../../lib/backends/memory/memory-records';
import type { MissedReason } from '../../lib/store/record-map';
import { ScheduleCatalog } from '../../lib/schedules/schedule-catalog';
import type { JsonValue } from '../../lib/schedules/schedule-definition';
import { decodeScheduleRecord, encodeScheduleRecord } from '../../lib/schedules/schedule-record.codec';
import { SCHEDULE_MAP, ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';
import { ScheduleView } from '../../lib/schedules/schedule-view';
import { resyncEveryMs, SILENT_LOSS_RESYNC_MS } from '../../lib/store/feed-staleness';
import { eventually } from '../support/eventually';

/**
 * A node's view of the runtime schedules when the feed loses an event: it keeps no poll of its own, and catches up
 * when the feed says changes may have been missed (the only sign a lost event leaves on every backend).
 */
describe('the runtime schedules view, fed by events, re-read on missed changes', () => {
  const views: ScheduleView[] = [];
  afterEach(() => {
    for (const view of views.splice(0)) view.close();
    jest.useRealTimers();
  });

  /** Node A writes through its catalog; node B watches through its view. */
  async function twoNodes(errors: unknown[] = [], resyncEvery?: number) {
    const records = new MemoryRecords();
    const backendB = new MemoryBackend({ records });
    const [a, b] = [new ScheduleRecordStore(new MemoryBackend({ records })), new ScheduleRecordStore(backendB)];
    await Promise.all([a.connect(), b.connect()]);
    const catalog = new ScheduleCatalog(a, { by: 'operator' });
    const view = new ScheduleView(b, { callTimeoutMs: 1_000, onError: (error) => errors.push(error), ...(resyncEvery !== undefined && { resyncEveryMs: resyncEvery }) });
    views.push(view);
    await catalog.upsert({ id: 'report', cron: '* * * * * *', handler: 'h', duration: '3s', data: { v: 1 } });
    await view.start();
    expect(view.get('report')?.definition.data).toEqual({ v: 1 });
    return { records, backendB, store: b, view };
  }

  /** An edit of `report` whose event nobody hears (the store applied it, the feed lost it). */
  function editUnheard(records: MemoryRecords, data: JsonValue): void {
    const map = records.map(SCHEDULE_MAP);
    const current = decodeScheduleRecord('report', map.get('report'));
    map.set('report', encodeScheduleRecord({ ...current, revision: current.revision + 1, definition: { ...current.definition!, data } }));
  }

  it.each<MissedReason>(['reconnected', 'member-left', 'cleared', 'lost-data'])('hears an edit whose event was lost once the feed says %s', async (reason) => {
    const { records, view } = await twoNodes();
    editUnheard(records, { v: 2 });
    records.missChanges(reason);
    await eventually('the lost edit in the view', () => (view.get('report')?.definition.data as { v?: number } | undefined)?.v === 2);
  });

  it('lists again at the reconnect, not while the feed is down', async () => {
    const { records, store, view } = await twoNodes();
    editUnheard(records, { v: 2 });
    const before = store.operationCount();
    records.missChanges('disconnected');
    expect(view.isTrusted()).toBe(false);
    await Promise.resolve();
    expect(store.operationCount()).toBe(before);
    records.missChanges('reconnected');
    await eventually('the lost edit in the view', () => (view.get('report')?.definition.data as { v?: number } | undefined)?.v === 2);
    await eventually('trusted again', () => view.isTrusted());
  });

  it('makes no store call of its own while nothing is missed (no poll, no resync timer)', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    const { store, view } = await twoNodes();
    const before = store.operationCount();
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(store.operationCount()).toBe(before);
    expect(view.isTrusted()).toBe(true);
  });

  it('lists again at the declared period where the feed may lose events without telling', async () => {
    expect(resyncEveryMs({})).toBe(SILENT_LOSS_RESYNC_MS); // a backend of one's own that does not say
    expect(resyncEveryMs({ feedTellsEveryLoss: false })).toBe(SILENT_LOSS_RESYNC_MS);
    expect(resyncEveryMs({ feedTellsEveryLoss: true })).toBeUndefined();
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    const { records, view } = await twoNodes([], SILENT_LOSS_RESYNC_MS);
    editUnheard(records, { v: 2 });
    await jest.advanceTimersByTimeAsync(SILENT_LOSS_RESYNC_MS - 1);
    expect(view.get('report')?.definition.data).toEqual({ v: 1 });
    await jest.advanceTimersByTimeAsync(1);
    expect(view.get('report')?.definition.data).toEqual({ v: 2 });
  });

  it('tries a failed re-read again after a second, doubling, until one works', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    const errors: unknown[] = [];
    const { records, backendB, view } = await twoNodes(errors);
    editUnheard(records, { v: 2 });
    backendB.failCalls('the store is down');
    records.missChanges('member-left');
    await jest.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1_999);
    expect(errors).toHaveLength(2); // the next try waits 2 s
    backendB.failCalls(undefined);
    await jest.advanceTimersByTimeAsync(1);
    expect(view.get('report')?.definition.data).toEqual({ v: 2 });
    expect(view.isTrusted()).toBe(true);
  });
});
