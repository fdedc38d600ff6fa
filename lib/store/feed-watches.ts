import { writtenByMark, type MissedReason, type RecordChanges, type Unwatch } from './record-map';

/** One watch of one map. */
interface Watch {
  readonly changes: RecordChanges;
  /** The text of the write ids the watch leaves out (its `exceptMark`), if any. */
  readonly except: string | undefined;
}

/**
 * The watches of a backend's change feed, by map, and how a change is told to them: the one home, for every feed that
 * hears one stream of changes for all its maps (PostgreSQL's `LISTEN`, Redis's subscriber), of leaving a watch's own
 * writes out when it asked (never a removal) and of a watcher's failure staying its own.
 */
export class FeedWatches {
  private readonly watches = new Map<string, Set<Watch>>();

  /** Adds a watch of `map`; returns what removes it. */
  add(map: string, changes: RecordChanges, exceptMark: string | undefined): Unwatch {
    const watch: Watch = { changes, except: exceptMark === undefined ? undefined : writtenByMark(exceptMark) };
    let set = this.watches.get(map);
    if (!set) this.watches.set(map, (set = new Set()));
    set.add(watch);
    return async () => {
      set.delete(watch);
      if (set.size === 0 && this.watches.get(map) === set) this.watches.delete(map);
    };
  }

  /** Whether anyone watches `map`. */
  has(map: string): boolean {
    return this.watches.has(map);
  }

  /** Removes every watch (the feed closes). */
  clear(): void {
    this.watches.clear();
  }

  /** Tells the watches of `map` that `key` was written (`value`) or removed (`null`). */
  tell(map: string, key: string, value: string | null): void {
    for (const watch of [...(this.watches.get(map) ?? [])]) {
      if (value !== null && watch.except !== undefined && value.includes(watch.except)) continue;
      try {
        watch.changes.changed(key, value);
      } catch {
        // A watcher's failure is its own.
      }
    }
  }

  /** Tells the watches of `map` that `key` was written, by some of its fields (see `RecordChanges.fields`). */
  tellFields(map: string, key: string, fields: Readonly<Record<string, unknown>>): void {
    for (const watch of [...(this.watches.get(map) ?? [])]) {
      try {
        watch.changes.fields?.(key, fields);
      } catch {
        // A watcher's failure is its own.
      }
    }
  }

  /** Tells the watches of `map` that changes may have been missed. */
  tellMap(map: string, reason: MissedReason): void {
    for (const watch of [...(this.watches.get(map) ?? [])]) {
      try {
        watch.changes.missed(reason);
      } catch {
        // A watcher's failure is its own.
      }
    }
  }

  /** Tells every watch that changes may have been missed. */
  tellAll(reason: MissedReason): void {
    for (const map of [...this.watches.keys()]) this.tellMap(map, reason);
  }
}
