import type { Counters, CounterValue } from '../../store/counter';
import { writtenByMark, type RecordChanges, type RecordMap, type RecordMapSpec, type RecordWriteOptions, type StoredRecord, type Unwatch, type WatchOptions } from '../../store/record-map';
import type { StoreBackend } from '../../store/store-backend';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { MemoryRecords } from './memory-records';
import { recordField } from '../../store/record-field';

/**
 * The store contract in this process's memory: one instance, local development and applications' own tests. Share
 * one {@link MemoryRecords} between several backends to simulate several nodes. Writes apply at once and their
 * events are delivered synchronously, to every watcher but the writer's own when it asked so.
 */
export class MemoryBackend implements StoreBackend {
  /** {@inheritDoc StoreBackend.kind} */
  readonly kind = 'memory';
  private operations = 0;
  private opens = 0;
  /** While set, calls fail as an unreachable store's would (tests of fail-closed paths). */
  private unreachable?: string;

  constructor(
    /** The data; a new, empty one by default. */
    readonly records: MemoryRecords = new MemoryRecords(),
  ) {}

  /** {@inheritDoc StoreBackend.open} */
  async open(): Promise<void> {
    this.opens++;
  }

  /** {@inheritDoc StoreBackend.close} */
  async close(): Promise<void> {
    this.opens = Math.max(0, this.opens - 1);
  }

  /** {@inheritDoc StoreBackend.map} */
  async map(name: string, _spec?: RecordMapSpec): Promise<RecordMap> {
    return new MemoryRecordMap(name, this.records, () => this.call());
  }

  /** {@inheritDoc StoreBackend.counters} */
  async counters(): Promise<Counters> {
    return new MemoryCounters(this.records, () => this.call());
  }


  /** {@inheritDoc StoreBackend.memberCount} */
  memberCount(): number | undefined {
    return undefined;
  }

  /** {@inheritDoc StoreBackend.isConnected} */
  isConnected(): boolean {
    return this.opens > 0 && this.unreachable === undefined;
  }

  /** {@inheritDoc StoreBackend.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  /** Makes every call fail with `StoreUnavailableError` (`reason`), or work again (`undefined`), for tests. */
  failCalls(reason: string | undefined): void {
    this.unreachable = reason;
  }

  /** Counts one call, and fails it when the backend was made unreachable. */
  private call(): void {
    this.operations++;
    if (this.opens === 0) throw new StoreUnavailableError('the memory backend is not open');
    if (this.unreachable !== undefined) throw new StoreUnavailableError(`memory store unreachable: ${this.unreachable}`);
  }
}

/** One map of a {@link MemoryBackend}. */
class MemoryRecordMap implements RecordMap {
  constructor(
    readonly name: string,
    private readonly records: MemoryRecords,
    private readonly call: () => void,
  ) {}

  async get(key: string): Promise<StoredRecord | undefined> {
    this.call();
    const value = this.records.map(this.name).get(key);
    return value === undefined ? undefined : { key, value };
  }

  async getMany(keys: readonly string[]): Promise<StoredRecord[]> {
    this.call();
    const map = this.records.map(this.name);
    return keys.flatMap((key) => {
      const value = map.get(key);
      return value === undefined ? [] : [{ key, value }];
    });
  }

  async list(): Promise<StoredRecord[]> {
    this.call();
    return [...this.records.map(this.name)].map(([key, value]) => ({ key, value }));
  }

  async findBy(field: string, value: string | number | boolean): Promise<StoredRecord[]> {
    return (await this.list()).filter((record) => recordField(record.value, field) === value);
  }

  async create(key: string, value: string, _options?: RecordWriteOptions): Promise<boolean> {
    this.call();
    if (this.records.map(this.name).has(key)) return false;
    this.records.write(this.name, key, value);
    return true;
  }

  async replace(expected: StoredRecord, value: string, _options?: RecordWriteOptions): Promise<boolean> {
    this.call();
    if (this.records.map(this.name).get(expected.key) !== expected.value) return false;
    this.records.write(this.name, expected.key, value);
    return true;
  }

  async remove(expected: StoredRecord): Promise<boolean> {
    this.call();
    if (this.records.map(this.name).get(expected.key) !== expected.value) return false;
    this.records.write(this.name, expected.key, null);
    return true;
  }

  async put(key: string, value: string, _options?: RecordWriteOptions): Promise<void> {
    this.call();
    this.records.write(this.name, key, value);
  }

  async delete(key: string): Promise<void> {
    this.call();
    this.records.write(this.name, key, null);
  }

  async lostSince(key: string): Promise<number | undefined> {
    this.call();
    const marked = this.records.markedLost(this.name, key);
    const lostAt = this.records.lostAt;
    return marked === undefined ? lostAt : lostAt === undefined ? marked : Math.max(marked, lostAt);
  }

  async markLost(key: string): Promise<void> {
    this.call();
    this.records.markLost(this.name, key);
  }

  async watch(changes: RecordChanges, options: WatchOptions = {}): Promise<Unwatch> {
    this.call();
    const stop = this.records.watch(this.name, {
      changed: (key, value) => changes.changed(key, value),
      missed: (reason) => changes.missed(reason),
      ...(options.exceptMark !== undefined && { except: writtenByMark(options.exceptMark) }),
    });
    return async () => stop();
  }
}

/** The counters of a {@link MemoryBackend}. */
class MemoryCounters implements Counters {
  constructor(
    private readonly records: MemoryRecords,
    private readonly call: () => void,
  ) {}

  async next(name: string): Promise<CounterValue> {
    this.call();
    const before = this.records.counters.get(name);
    const lostSince = before === undefined ? this.records.lostAt : undefined;
    // After a loss, a value no earlier counter can have reached: the loss's time in µs (fewer than 1,000 values a ms).
    let value = (before ?? 0) + 1;
    if (lostSince !== undefined) {
      const from = Math.max(this.records.clock.now(), lostSince);
      this.records.jumpedFromMs = Math.max(this.records.jumpedFromMs, from);
      value = from * 1_000;
    }
    this.records.counters.set(name, value);
    return lostSince === undefined ? { value } : { value, lostSince };
  }

  async current(name: string): Promise<number> {
    this.call();
    return this.records.counters.get(name) ?? 0;
  }
}
