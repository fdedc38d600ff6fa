import type { RecordMap, RecordMapSpec } from './record-map';
import type { RecordCodec } from './record-codec';

/** What a watched map tells its capability store. */
export interface WatchedRecordsEvents {
  /** The feed's connection dropped: answers from the view stop being fresh until a resync. */
  disconnected?(): void;
  /** A resync after missed changes finished (the view was re-read). */
  resynced?(): void | Promise<void>;
  /** Records the view held were found gone by a resync, without a removal heard (lost events, a cleared map). */
  lost?(keys: string[]): void | Promise<void>;
  /**
   * Records the view held are about to be taken out of it as gone by a re-read; runs before the view changes (the
   * permits mark them lost in the store here, so whoever rebuilds one waits out what it granted).
   */
  gone?(map: RecordMap, keys: string[]): Promise<void>;
  /** The feed says a record was removed (or evicted, or expired), before the view takes it in. */
  removed?(map: RecordMap, key: string): void;
  /** A stored value could not be decoded. */
  corruptValue?(key: string, reason: string): void;
}

/** How a map is watched. */
export interface WatchedRecordsOptions<T> {
  /** The map's name within the backend. */
  readonly map: string;
  /** The capability, for errors (`'permit'`: "the permit store is not connected"). */
  readonly store: string;
  readonly codec: RecordCodec<T>;
  readonly spec?: RecordMapSpec;
  /** Deadline of a call given none, in ms. Default: the backend's. */
  readonly callTimeoutMs?: number;
  /** This process's monotonic clock (tests pass a fake one). */
  readonly monotonicNow?: () => number;
}
