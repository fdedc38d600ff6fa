import { compareCodePoints } from '../core/code-point-order';
import type { ScheduleRecord } from './schedule-record';
import { decodeScheduleRecord, encodeScheduleRecord } from './schedule-record.codec';
import type { ScheduleCallOptions, ScheduleListOptions, ScheduleStore, ScheduleStoreEvents, ScheduleWatcher, VersionedSchedule } from './schedule-store';

/** The shared state of memory schedule stores: one per "cluster" (give the same backend to the stores of one process). */
export class MemoryScheduleBackend {
  /** @internal */ readonly records = new Map<string, string>();
  /** @internal */ marker: string | null = null;
  /** @internal */ readonly watchers = new Set<ScheduleWatcher>();
}

/** Runtime schedules in this process's memory (one instance, development, tests). Passes the same contract as the Hazelcast store. */
export class MemoryScheduleStore implements ScheduleStore {
  private operations = 0;
  private events: ScheduleStoreEvents = {};
  private readonly own = new Set<ScheduleWatcher>();

  constructor(private readonly backend: MemoryScheduleBackend = new MemoryScheduleBackend()) {}

  /** {@inheritDoc ScheduleStore.connect} */
  async connect(events: ScheduleStoreEvents = {}): Promise<void> {
    this.events = events;
  }

  /** {@inheritDoc ScheduleStore.close} */
  async close(): Promise<void> {
    for (const watcher of this.own) this.backend.watchers.delete(watcher);
    this.own.clear();
  }

  /** {@inheritDoc ScheduleStore.read} */
  async read(id: string, _options?: ScheduleCallOptions): Promise<VersionedSchedule> {
    this.operations++;
    const raw = this.backend.records.get(id) ?? null;
    return { raw, record: raw === null ? undefined : decodeScheduleRecord(id, raw) };
  }

  /** {@inheritDoc ScheduleStore.list} */
  async list({ removed = false }: ScheduleListOptions = {}): Promise<VersionedSchedule[]> {
    this.operations++;
    const listed: VersionedSchedule[] = [];
    for (const [id, raw] of [...this.backend.records].sort(([a], [b]) => compareCodePoints(a, b))) {
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
  async compareAndSet(id: string, expected: Pick<VersionedSchedule, 'raw'>, next: ScheduleRecord, _options?: ScheduleCallOptions): Promise<boolean> {
    this.operations++;
    if ((this.backend.records.get(id) ?? null) !== expected.raw) return false;
    const raw = encodeScheduleRecord(next);
    this.backend.records.set(id, raw);
    for (const watcher of [...this.backend.watchers]) {
      try {
        watcher.changed(id, decodeScheduleRecord(id, raw));
      } catch {
        // A failing watcher must not fail the write that was made.
      }
    }
    return true;
  }

  /** {@inheritDoc ScheduleStore.readMarker} */
  async readMarker(_options?: ScheduleCallOptions): Promise<string | null> {
    this.operations++;
    return this.backend.marker;
  }

  /** {@inheritDoc ScheduleStore.touchMarker} */
  async touchMarker(value: string, _options?: ScheduleCallOptions): Promise<void> {
    this.operations++;
    this.backend.marker = value;
  }

  /** {@inheritDoc ScheduleStore.watch} */
  watch(watcher: ScheduleWatcher): () => void {
    this.backend.watchers.add(watcher);
    this.own.add(watcher);
    return () => {
      this.backend.watchers.delete(watcher);
      this.own.delete(watcher);
    };
  }

  /** {@inheritDoc ScheduleStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }
}
