import type { Clock } from '../../core/clock';
import type { Counters, CounterValue } from '../../store/counter';
import { writtenByMark, type RecordChanges, type RecordMap, type RecordMapSpec, type RecordWriteOptions, type StoredRecord, type Unwatch, type WatchOptions } from '../../store/record-map';
import type { StoreBackend } from '../../store/store-backend';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { MemoryRecords } from './memory-records';
import { recordField } from '../../store/record-field';

/** How a {@link MemoryBackend} is made. */
export interface MemoryBackendOptions {
  /** Where the time of a loss of data is read ({@link MemoryRecords.loseData}). Default the system clock. */
  clock?: Clock;
  /**
   * The data of another memory backend, to be one more node of it (as {@link MemoryBackend.node} makes). Default: data
   * of its own, new and empty.
   */
  records?: MemoryRecords;
}

/**
 * The store contract in this process's memory: one instance, local development and applications' own tests.
 *
 * One instance is a whole cluster in one process: give it to several modules (`backend: memory`) and each acts as one
 * node of it, with write ids and calls of its own ({@link MemoryBackend.node}). Writes apply at once; their events
 * come a moment (a microtask) after, as a store's events come after its answer, to every watcher but the writer's own
 * when it asked so. Nothing is ever lost unless a test says so ({@link MemoryRecords.loseData}).
 */
export class MemoryBackend implements StoreBackend {
  /** {@inheritDoc StoreBackend.kind} */
  readonly kind = 'memory';
  /** The memory store loses no event: its feed tells every loss (`StoreBackend.feedTellsEveryLoss`). */
  readonly feedTellsEveryLoss = true;
  /** The data every node of this backend shares: tests plant values and lose data through it. */
  readonly records: MemoryRecords;
  private operations = 0;
  private opens = 0;
  /** While set, calls fail as an unreachable store's would (tests of fail-closed paths). */
  private unreachable?: string;
  /** Whether this backend is one node of shared data (made with `records`), rather than the owner of its own. */
  private readonly isNode: boolean;
  /** The backend this one is a node of, when {@link MemoryBackend.node} made it. */
  private nodeOf?: MemoryBackend;

  constructor(options: MemoryBackendOptions = {}) {
    this.records = options.records ?? new MemoryRecords(options.clock);
    this.isNode = options.records !== undefined;
  }

  /**
   * One node's connection to this backend's data: its own write ids (a node's feed leaves out its own writes only)
   * and its own count of calls; {@link MemoryBackend.failCalls} on this backend fails its nodes' calls too. A node's
   * node is itself. A module given a backend calls this once and runs every capability on that backend on the node.
   */
  node(): MemoryBackend {
    if (this.isNode) return this;
    const node = new MemoryBackend({ records: this.records });
    node.nodeOf = this;
    return node;
  }

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
    return this.opens > 0 && this.unreachable === undefined && this.nodeOf?.unreachable === undefined;
  }

  /** How many calls the backend made so far, its nodes' ({@link MemoryBackend.node}) included. */
  operationCount(): number {
    return this.operations;
  }

  /** Makes every call fail with `StoreUnavailableError` (`reason`), or work again (`undefined`), for tests. */
  failCalls(reason: string | undefined): void {
    this.unreachable = reason;
  }

  /** Counts one call (here and on the backend this is a node of), and fails it when either was made unreachable. */
  private call(): void {
    this.operations++;
    if (this.nodeOf) this.nodeOf.operations++;
    if (this.opens === 0) throw new StoreUnavailableError('the memory backend is not open');
    const unreachable = this.unreachable ?? this.nodeOf?.unreachable;
    if (unreachable !== undefined) throw new StoreUnavailableError(`memory store unreachable: ${unreachable}`);
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
