import type { IMap } from 'hazelcast-client';
import type { PermitStore } from '../../lib/permits/permit-store';
import type { RecordMap } from '../../lib/store/record-map';
import type { MissedReason } from '../../lib/store/record-map';

/** The parts of a record store's watched map (`WatchedRecords`) that tests reach into, to script a store's answers and feed. */
export interface WatchedInternals {
  map(): RecordMap;
  /** What the feed calls with a value another node wrote. */
  heard(key: string, value: string): void;
  /** What the feed calls with a removal. */
  removed(key: string): void;
  /** Its trust in the view, which the feed tells when changes may have been missed. */
  trust: { missed(reason: MissedReason): void };
}

/** The watched map under a `PermitRecordStore` (Hazelcast's or memory's). */
export function watchedOf(store: PermitStore): WatchedInternals {
  return (store as unknown as { records: WatchedInternals }).records;
}

/**
 * The IMap under a Hazelcast permit store's record map (inside the map that observes its calls, where there is one),
 * whose calls a test can hold up or count.
 */
export function imapOf(store: PermitStore): IMap<string, string> {
  const opened = watchedOf(store).map() as unknown as { inner?: RecordMap };
  return ((opened.inner ?? opened) as unknown as { map: IMap<string, string> }).map;
}
