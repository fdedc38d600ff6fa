import { systemClock, type Clock } from '../../core/clock';
import type { MissedReason } from '../../store/record-map';

/** A record in memory, and when it may be dropped (its TTL). */
export interface MemoryRecord {
  value: string;
  dropAt?: number;
}

/** Someone hearing one map's changes. */
export interface MemoryWatcher {
  changed(key: string, value: string | null): void;
  missed(reason: MissedReason): void;
  /** Values carrying this text (a backend instance's mark) are not sent to this watcher. */
  readonly except?: string;
}

/**
 * The data behind one or more {@link MemoryBackend}s: share one between several backends to simulate several nodes
 * in one process (each module of a test a node). Also the place tests lose data on purpose ({@link loseData}).
 */
export class MemoryRecords {
  private readonly maps = new Map<string, Map<string, MemoryRecord>>();
  private readonly watchers = new Map<string, Set<MemoryWatcher>>();
  /** Counters by name; kept apart from the maps so a map's `clear` never touches them. */
  readonly counters = new Map<string, number>();
  /** When the data was last lost ({@link loseData}), or `undefined` when it never was. */
  lostAt?: number;

  constructor(
    /** Where TTLs are read against. */
    readonly clock: Clock = systemClock,
  ) {}

  /** The records of map `name`, with those whose TTL passed dropped. */
  map(name: string): Map<string, MemoryRecord> {
    let map = this.maps.get(name);
    if (!map) this.maps.set(name, (map = new Map()));
    const now = this.clock.now();
    for (const [key, record] of map) {
      if (record.dropAt !== undefined && record.dropAt <= now) {
        map.delete(key);
        this.tell(name, key, null);
      }
    }
    return map;
  }

  /** Stores `value` under `key` (`null`: removes it) and tells the map's watchers. For tests, a value the library did not write. */
  write(name: string, key: string, value: string | null, ttlMs?: number): void {
    const map = this.map(name);
    if (value === null) {
      if (!map.delete(key)) return;
    } else {
      map.set(key, ttlMs === undefined ? { value } : { value, dropAt: this.clock.now() + ttlMs });
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

  /**
   * Loses every record and counter, as a store without persistence does on a restart, and tells every watcher
   * `missed('lost-data')`. Reads of absent keys then answer `lostSince` = now.
   */
  loseData(): void {
    this.maps.clear();
    this.counters.clear();
    this.lostAt = this.clock.now();
    for (const set of this.watchers.values()) for (const watcher of set) watcher.missed('lost-data');
  }

  private tell(name: string, key: string, value: string | null): void {
    for (const watcher of this.watchers.get(name) ?? []) {
      if (value !== null && watcher.except !== undefined && value.includes(watcher.except)) continue;
      watcher.changed(key, value);
    }
  }
}
