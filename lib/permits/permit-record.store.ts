import type { Clock } from '../core/clock';
import type { RecordMap } from '../store/record-map';
import type { StoreBackend } from '../store/store-backend';
import { writeIdsOf } from '../store/write-ids';
import { MapHold } from '../store/map-hold';
import { WatchedRecords } from '../store/watched-records';
import type { SemaphoreEntry } from './semaphore-entry';
import type { CallOptions, PermitStore, WriteOptions, PermitStoreContext, PermitStoreEvents, VersionedEntry } from './permit-store';
import { decodeEntries, encodeEntry } from './semaphore-entry.codec';
import { SEMAPHORE_CODEC, type ObservedEntry } from './semaphore.view';

/** The record map semaphores live in: one entry per semaphore, its definition and permits. */
export const SEMAPHORE_MAP = 'semaphores';
/**
 * The record map that says which semaphores ever had an entry: one small record per name, written once after its entry
 * was first created and never removed. An entry found absent under a name it lists went without its capability
 * removing it (nothing removes an entry), even when nobody heard it go.
 */
export const SEMAPHORE_KEYS_MAP = 'semaphore-keys';

/**
 * Semaphores on any backend of the store contract: one entry per semaphore in the record map `semaphores`, written
 * only by compare-and-set on canonical JSON strings, every call with a deadline. Each node keeps the map's event-fed
 * view (`WatchedRecords`: re-read whenever the feed says changes may have been missed, never trusted beyond the
 * engine's age bound). What is the permits' own: an entry removed, evicted or found gone is a loss of its permits,
 * marked in the store so whoever rebuilds it waits them out.
 */
export class PermitRecordStore implements PermitStore {
  private readonly records: WatchedRecords<SemaphoreEntry>;
  private events: PermitStoreEvents = {};
  private clock?: Clock;
  /**
   * When this node last heard each entry removed (epoch ms): a read that finds it absent reports it lost since then,
   * whatever the store says yet. Bounded by the entries the store ever held (removals come only of those).
   */
  private readonly removedAt = new Map<string, number>();
  private readonly existed: MapHold;

  constructor(
    private readonly backend: StoreBackend,
    /** Deadline of a call given none, in ms. Default: the backend's. */
    callTimeoutMs?: number,
  ) {
    this.records = new WatchedRecords(backend, { map: SEMAPHORE_MAP, store: 'permit', codec: SEMAPHORE_CODEC, callTimeoutMs, spec: { forgetOnRestore: true } });
    this.existed = new MapHold(backend, SEMAPHORE_KEYS_MAP, 'permit');
  }

  /** {@inheritDoc PermitStore.connect} */
  async connect({ clock, events = {} }: PermitStoreContext): Promise<void> {
    this.events = events;
    this.clock = clock;
    await this.records.open({
      disconnected: () => this.events.disconnected?.(),
      resynced: () => this.events.reconnected?.(),
      lost: (names) => this.events.entriesLost?.(names),
      // Gone without a removal heard: marked lost before anyone rebuilds them, so whoever does, on any node, waits.
      gone: async (map, names) => {
        await Promise.all(names.map((name) => this.records.call(() => map.markLost(name))));
      },
      removed: (map, name) => this.removed(map, name),
      corruptValue: (key, reason) => this.events.corruptValue?.(key, reason),
    });
    try {
      await this.existed.open();
    } catch (error) {
      await this.close().catch(() => undefined);
      throw error;
    }
  }

  /** {@inheritDoc PermitStore.close} */
  async close(): Promise<void> {
    this.events = {};
    await this.records.close();
    await this.existed.close();
  }

  /** Connected, and nothing since the last successful resync suggests this node missed events. */
  isConnected(): boolean {
    return this.records.isTrusted();
  }

  /** {@inheritDoc PermitStore.memberCount} */
  memberCount(): number | undefined {
    // A member list goes stale while disconnected; count nobody then.
    return this.records.reachable() ? this.backend.memberCount() : 0;
  }

  /** {@inheritDoc PermitStore.read} */
  async read(name: string, options: CallOptions = {}): Promise<VersionedEntry> {
    const started = Date.now();
    const read = await this.records.read(name, options);
    if (read.raw !== null) return read;
    const map = this.records.map();
    const existed = this.existed.map();
    const left = options.timeoutMs === undefined ? undefined : options.timeoutMs - (Date.now() - started);
    const timeout = left === undefined ? {} : { timeoutMs: left };
    const [storeSays, marker, dropped] = await Promise.all([
      this.records.call(() => map.lostSince(name, timeout)),
      this.records.call(() => existed.get(name, timeout)),
      map.lostValue ? this.records.call(() => map.lostValue!(name, timeout)) : undefined,
    ]);
    // A removal this node heard counts even before the store says so; an entry that existed and is gone went unheard,
    // at some time before now (a map cleared or evicted while every node that knew it was cut off).
    const removedAt = this.removedAt.get(name);
    const unheard = marker ? (this.clock?.now() ?? Date.now()) : undefined;
    const times = [storeSays, removedAt, unheard].filter((t): t is number => t !== undefined);
    const restored = dropped === undefined ? undefined : restoredEntry(name, dropped);
    const withRestored = restored ? { ...read, restored } : read;
    return times.length === 0 ? withRestored : { ...withRestored, lostSince: Math.max(...times) };
  }

  /** A new unique id for a write, marked as this node's so its feed is not sent the write back. */
  writeId(): string {
    return writeIdsOf(this.backend).next();
  }

  /** {@inheritDoc PermitStore.compareAndSet} */
  async compareAndSet(name: string, expected: Pick<VersionedEntry, 'raw'>, next: SemaphoreEntry, options: WriteOptions = {}): Promise<boolean> {
    const written = await this.records.write(name, expected.raw, next, encodeEntry(next), options);
    // Noted by whoever creates the entry (a create also follows a loss, which may have taken the note with it): once per
    // entry in the cluster, not once per node, so a grant of an entry that exists costs nothing more.
    if (written && expected.raw === null) void this.markExisted(name);
    return written;
  }

  /**
   * Records in the map `semaphore-keys` that `name` has an entry, after the create of it landed (never before: a name
   * listed without ever having had an entry would make its first creator wait out a loss that never was). In the
   * background, by the creator only. Entries created before this note existed (by an older version) have none.
   */
  private async markExisted(name: string): Promise<void> {
    try {
      const existed = this.existed.map();
      await this.records.call(() => existed.create(name, JSON.stringify({ since: this.clock?.now() ?? Date.now() })));
    } catch {
      // Not noted: a loss of this entry no node hears falls back to what the store's own loss detection says.
    }
  }


  /** {@inheritDoc PermitStore.list} */
  async list(options: CallOptions = {}): Promise<Array<{ name: string; entry: SemaphoreEntry }>> {
    const records = await this.records.list(options);
    return decodeEntries(records.map(({ key, value }): [string, string] => [key, value]), (key, reason) => this.events.corruptValue?.(key, reason));
  }

  /** {@inheritDoc PermitStore.readRaw} */
  readRaw(name: string, options: CallOptions = {}): Promise<string | null> {
    return this.records.readRaw(name, options);
  }

  /** {@inheritDoc PermitStore.operationCount} */
  operationCount(): number {
    return this.records.operationCount();
  }

  /** {@inheritDoc PermitStore.peek} */
  peek(name: string): ObservedEntry | undefined {
    return this.records.view.peek(name);
  }

  /** {@inheritDoc PermitStore.known} */
  known(): Array<{ name: string; entry: SemaphoreEntry }> {
    return this.records.view.entries();
  }

  /** {@inheritDoc PermitStore.remembered} */
  remembered(name: string): SemaphoreEntry | undefined {
    return this.records.view.remembered(name);
  }

  /** {@inheritDoc PermitStore.watch} */
  watch(listener: (name: string, entry: SemaphoreEntry | undefined) => void, wants?: (name: string) => boolean): () => void {
    return this.records.view.subscribe(listener, wants);
  }

  /**
   * An entry was removed (or evicted, or expired). No library code removes a semaphore's entry (a definition removed
   * is an entry without one), so it is a loss of its permits: the store is told (`markLost`), and whoever rebuilds the
   * entry waits them out; this node reads it as lost at once.
   */
  private removed(map: RecordMap, name: string): void {
    this.removedAt.set(name, this.clock?.now() ?? Date.now());
    void this.records.call(() => map.markLost(name)).catch(() => undefined);
  }
}

/** The entry a restore dropped, when it can still be read (an unreadable one is no better than none). */
function restoredEntry(name: string, raw: string): SemaphoreEntry | undefined {
  try {
    return SEMAPHORE_CODEC.decode(name, raw);
  } catch {
    return undefined;
  }
}
