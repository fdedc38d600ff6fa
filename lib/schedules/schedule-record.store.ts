import { compareCodePoints } from '../core/code-point-order';
import { CorruptStateError } from '../core/errors/corrupt-state.error';
import type { MissedReason, RecordMap } from '../store/record-map';
import { resyncEveryMs } from '../store/feed-staleness';
import { MapHold } from '../store/map-hold';
import type { StoreBackend } from '../store/store-backend';
import type { SqlTransaction, TransactionRecords } from '../store/sql-transaction';
import { invalidDefinition } from '../core/errors/input.errors';
import type { ScheduleRecord } from './schedule-record';
import { decodeScheduleRecord, encodeScheduleRecord } from './schedule-record.codec';
import type { ScheduleCallOptions, ScheduleListOptions, ScheduleStore, ScheduleStoreEvents, ScheduleWatcher, VersionedSchedule } from './schedule-store';

/** The record map runtime schedules live in. */
export const SCHEDULE_MAP = 'schedules';

/**
 * Runtime schedules on any backend of the store contract: one canonical JSON record per schedule id, written by
 * compare-and-set against the exact text read. Changes come from the map's feed; whenever it says some may have been missed (a reconnect, a member leaving, a cleared map, lost
 * data), watchers are told to re-read.
 */
export class ScheduleRecordStore implements ScheduleStore {
  private readonly hold: MapHold;
  private operations = 0;
  private events: ScheduleStoreEvents = {};
  private readonly watchers = new Set<ScheduleWatcher>();

  constructor(private readonly backend: StoreBackend) {
    this.hold = new MapHold(backend, SCHEDULE_MAP, 'schedule');
  }

  /** {@inheritDoc ScheduleStore.resyncEveryMs} */
  get resyncEveryMs(): number | undefined {
    return resyncEveryMs(this.backend);
  }

  /** {@inheritDoc ScheduleStore.connect} */
  async connect(events: ScheduleStoreEvents = {}): Promise<void> {
    this.events = events;
    await this.hold.open({ changed: (id, raw) => this.heard(id, raw), missed: (reason) => this.missed(reason) });
  }

  /** {@inheritDoc ScheduleStore.close} */
  async close(): Promise<void> {
    this.events = {};
    await this.hold.close();
  }

  /** {@inheritDoc ScheduleStore.read} */
  read(id: string, options: ScheduleCallOptions = {}): Promise<VersionedSchedule> {
    return readSchedule(this.records(options), id);
  }

  /** {@inheritDoc ScheduleStore.list} */
  async list({ removed = false, ...options }: ScheduleListOptions = {}): Promise<VersionedSchedule[]> {
    const records = await this.require().list(options);
    const listed: VersionedSchedule[] = [];
    for (const { key: id, value: raw } of records.sort((a, b) => compareCodePoints(a.key, b.key))) {
      try {
        const record = decodeScheduleRecord(id, raw);
        if (removed || record.definition !== null) listed.push({ raw, record });
      } catch (error) {
        this.events.corruptValue?.(id, (error as Error).message);
      }
    }
    return listed;
  }

  /** {@inheritDoc ScheduleStore.compareAndSet} */
  compareAndSet(id: string, expected: Pick<VersionedSchedule, 'raw'>, next: ScheduleRecord, options: ScheduleCallOptions = {}): Promise<boolean> {
    return writeSchedule(this.records(options), id, expected, next);
  }

  /** The map's reads and compare-and-sets with `options`, as the ones in a transaction are called. */
  private records(options: ScheduleCallOptions): TransactionRecords {
    const map = this.require();
    return { get: (key) => map.get(key, options), create: (key, value) => map.create(key, value, options), replace: (expected, value) => map.replace(expected, value, options) };
  }

  /** {@inheritDoc ScheduleStore.inTransaction} */
  inTransaction(transaction: SqlTransaction): Pick<ScheduleStore, 'read' | 'compareAndSet'> {
    if (!this.backend.recordsIn) throw invalidDefinition(undefined, 'transaction', 'a runtime schedule is written in your transaction on the PostgreSQL backend only', 'schedule edit');
    const records = this.backend.recordsIn(transaction, SCHEDULE_MAP);
    return { read: (id) => readSchedule(records, id), compareAndSet: (id, expected, next) => writeSchedule(records, id, expected, next) };
  }

  /** {@inheritDoc ScheduleStore.watch} */
  watch(watcher: ScheduleWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** {@inheritDoc ScheduleStore.lostSince} */
  lostSince(id: string, options: ScheduleCallOptions = {}): Promise<number | undefined> {
    return this.require().lostSince(id, options);
  }

  /** {@inheritDoc ScheduleStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  /** A change heard: the record as written (a tombstone too), or its disappearance; unreadable values are reported. */
  private heard(id: string, raw: string | null): void {
    if (this.watchers.size === 0) return;
    let record: ScheduleRecord | undefined;
    if (raw !== null) {
      try {
        record = decodeScheduleRecord(id, raw);
      } catch (error) {
        this.events.corruptValue?.(id, error instanceof CorruptStateError ? error.message : String(error));
        return;
      }
    }
    for (const watcher of [...this.watchers]) guard(() => watcher.changed(id, record));
  }

  private missed(reason: MissedReason): void {
    for (const watcher of [...this.watchers]) guard(() => watcher.missed?.(reason));
  }

  /** The map, counting the call about to be made on it. */
  private require(): RecordMap {
    const map = this.hold.map();
    this.operations++;
    return map;
  }
}

/** Runs a watcher so that one that throws never stops the others (or the store's event delivery). */
function guard(action: () => void): void {
  try {
    action();
  } catch {
    // The watcher's own business; the view reports its listeners' failures itself.
  }
}

/** One schedule's record as read from `records` (its map, or the same in the application's transaction); a tombstone too. */
async function readSchedule(records: TransactionRecords, id: string): Promise<VersionedSchedule> {
  const record = await records.get(id);
  return record ? { raw: record.value, record: decodeScheduleRecord(id, record.value) } : { raw: null, record: undefined };
}

/** `next` written over exactly `expected.raw` (`null`: created); whether it landed. */
function writeSchedule(records: TransactionRecords, id: string, expected: Pick<VersionedSchedule, 'raw'>, next: ScheduleRecord): Promise<boolean> {
  const raw = encodeScheduleRecord(next);
  return expected.raw === null ? records.create(id, raw) : records.replace({ key: id, value: expected.raw }, raw);
}
