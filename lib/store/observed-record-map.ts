import type { RecordCallOptions, RecordChanges, RecordMap, RecordMapSpec, RecordWriteOptions, StoredRecord, Unwatch, WatchOptions } from './record-map';
import type { StoreBackend } from './store-backend';
import { storeCallsOf, storeOfMap, type StoreCallObservers } from './store-call-observers';

/**
 * Opens the map `name` of `backend` as every capability store does: wrapped so its calls are reported to the
 * backend's {@link storeCallsOf} listeners (the store-call metrics of every backend, a third party's too).
 */
export async function openObservedMap(backend: StoreBackend, name: string, spec?: RecordMapSpec): Promise<RecordMap> {
  return observedMap(backend, await backend.map(name, spec));
}

/** `map`, a map of `backend` opened another way (a native store's), with its calls reported as {@link openObservedMap}'s. */
export function observedMap(backend: StoreBackend, map: RecordMap): RecordMap {
  return new ObservedRecordMap(map, storeCallsOf(backend), storeOfMap(map.name));
}

/**
 * A record map whose calls are timed and reported, with how they ended, while anyone listens; while nobody does, a
 * call costs one property read more than the backend's own. It makes no store call of its own.
 */
export class ObservedRecordMap implements RecordMap {
  readonly name: string;
  readonly lostValue?: (key: string, options?: RecordCallOptions) => Promise<string | undefined>;

  constructor(
    private readonly inner: RecordMap,
    private readonly calls: StoreCallObservers,
    /** The `store` label of its calls. */
    private readonly store: string,
  ) {
    this.name = inner.name;
    if (inner.lostValue) this.lostValue = (key, options) => this.observed(performance.now(), inner.lostValue!(key, options));
  }

  get(key: string, options?: RecordCallOptions): Promise<StoredRecord | undefined> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.get(key, options)) : this.inner.get(key, options);
  }

  getMany(keys: readonly string[], options?: RecordCallOptions): Promise<StoredRecord[]> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.getMany(keys, options)) : this.inner.getMany(keys, options);
  }

  list(options?: RecordCallOptions): Promise<StoredRecord[]> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.list(options)) : this.inner.list(options);
  }

  findBy(field: string, value: string | number | boolean, options?: RecordCallOptions): Promise<StoredRecord[]> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.findBy(field, value, options)) : this.inner.findBy(field, value, options);
  }

  create(key: string, value: string, options?: RecordWriteOptions): Promise<boolean> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.create(key, value, options), false) : this.inner.create(key, value, options);
  }

  replace(expected: StoredRecord, value: string, options?: RecordWriteOptions): Promise<boolean> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.replace(expected, value, options), false) : this.inner.replace(expected, value, options);
  }

  remove(expected: StoredRecord, options?: RecordCallOptions): Promise<boolean> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.remove(expected, options), false) : this.inner.remove(expected, options);
  }

  put(key: string, value: string, options?: RecordWriteOptions): Promise<void> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.put(key, value, options)) : this.inner.put(key, value, options);
  }

  delete(key: string, options?: RecordCallOptions): Promise<void> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.delete(key, options)) : this.inner.delete(key, options);
  }

  lostSince(key: string, options?: RecordCallOptions): Promise<number | undefined> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.lostSince(key, options)) : this.inner.lostSince(key, options);
  }

  markLost(key: string, options?: RecordCallOptions): Promise<void> {
    return this.calls.heard ? this.observed(performance.now(), this.inner.markLost(key, options)) : this.inner.markLost(key, options);
  }

  /** Not timed: a watch is a subscription, not a round trip a decision waits for. */
  watch(changes: RecordChanges, options?: WatchOptions): Promise<Unwatch> {
    return this.inner.watch(changes, options);
  }

  /** Reports `pending`, started at `startedMs` (arguments are evaluated in order: the clock is read before the call starts). */
  private observed<T>(startedMs: number, pending: Promise<T>, conflictOn?: T): Promise<T> {
    return this.calls.track(this.store, startedMs, pending, conflictOn);
  }
}
