import { systemClock, type Clock } from '../../core/clock';
import type { MissedReason } from '../../store/record-map';

/** Someone hearing one map's changes. */
export interface MemoryWatcher {
  /** A record was written (`value`) or removed (`null`). */
  changed(key: string, value: string | null): void;
  /** Changes may have been missed (the data was lost). */
  missed(reason: MissedReason): void;
  /** Values carrying this text (a backend instance's mark) are not sent to this watcher. */
  readonly except?: string;
}

/**
 * The data behind one or more {@link MemoryBackend}s: share one between several backends to simulate several nodes
 * in one process (each module of a test a node). Also the place tests lose data on purpose ({@link MemoryRecords.loseData}).
 */
export class MemoryRecords {
  private readonly maps = new Map<string, Map<string, string>>();
  private readonly watchers = new Map<string, Set<MemoryWatcher>>();
  /** Counters by name; kept apart from the maps so a map's `clear` never touches them. */
  readonly counters = new Map<string, number>();
  /** When records were marked lost, by map and key. */
  private readonly lost = new Map<string, number>();
  /** The latest ms a counter jumped from after a loss (see `MemoryCounters`): the next loss dates after it. */
  jumpedFromMs = -Infinity;
  /** When the data was last lost ({@link MemoryRecords.loseData}), or `undefined` when it never was. */
  lostAt?: number;

  constructor(
    /** Where the time of a loss is read (counters jump to it). */
    readonly clock: Clock = systemClock,
  ) {}

  /**
   * The values of map `name` by key. Records are kept until removed: a TTL is a garbage-collection aid, and one
   * process has no dead instances to collect after (nor a clock of theirs to read it against).
   */
  map(name: string): Map<string, string> {
    let map = this.maps.get(name);
    if (!map) this.maps.set(name, (map = new Map()));
    return map;
  }

  /** Stores `value` under `key` (`null`: removes it) and tells the map's watchers. For tests, a value the library did not write. */
  write(name: string, key: string, value: string | null): void {
    const map = this.map(name);
    if (value === null) {
      if (!map.delete(key)) return;
    } else {
      map.set(key, value);
    }
    this.tell(name, key, value);
  }

  /** Hears map `name`; returns the unsubscribe. */
  watch(name: string, watcher: MemoryWatcher): () => void {
    let set = this.watchers.get(name);
    if (!set) this.watchers.set(name, (set = new Set()));
    set.add(watcher);
    return () => set.delete(watcher);
  }

  /** Records that a record of map `name` under `key` was lost now (see `RecordMap.markLost`). */
  markLost(name: string, key: string): void {
    this.lost.set(`${name}\u0000${key}`, this.clock.now());
  }

  /** When a record of map `name` under `key` was last marked lost, if ever. */
  markedLost(name: string, key: string): number | undefined {
    return this.lost.get(`${name}\u0000${key}`);
  }

  /**
   * Loses every record and counter, as a store without persistence does on a restart, and tells every watcher
   * `missed('lost-data')`. Reads of absent keys then answer `lostSince` = now.
   */
  loseData(): void {
    this.maps.clear();
    this.counters.clear();
    // Strictly later than the ms every earlier jump of the counters started from, even within one ms: counters then
    // jump above every value handed out since (fewer than 1,000 a ms).
    this.lostAt = Math.max(this.clock.now(), (this.lostAt ?? -Infinity) + 1, this.jumpedFromMs + 1);
    for (const set of this.watchers.values()) for (const watcher of set) watcher.missed('lost-data');
  }

  /**
   * Tells every watcher that changes may have been missed, losing nothing: a feed that dropped events, as a reconnect
   * or a member leaving does on a clustered store. For tests of what a view does then.
   */
  missChanges(reason: MissedReason = 'member-left'): void {
    for (const set of this.watchers.values()) for (const watcher of [...set]) watcher.missed(reason);
  }

  /** Tells the map's watchers of a change, each a moment after the write (in a microtask), as a store's events come after its answer. */
  private tell(name: string, key: string, value: string | null): void {
    for (const watcher of this.watchers.get(name) ?? []) {
      if (value !== null && watcher.except !== undefined && value.includes(watcher.except)) continue;
      queueMicrotask(() => watcher.changed(key, value));
    }
  }
}
