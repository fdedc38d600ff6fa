import type { SqlTransaction } from '../store/sql-transaction';
import type { MissedReason } from '../store/record-map';
import type { ScheduleRecord } from './schedule-record';

/** A schedule record as read, with the exact stored value a compare-and-set is checked against. */
export interface VersionedSchedule {
  /** The decoded record (a tombstone too), or `undefined` when there is none. */
  readonly record: ScheduleRecord | undefined;
  /** The stored value (`null` if absent). Opaque to callers. */
  readonly raw: string | null;
}

/** Options of one schedule-store call. */
export interface ScheduleCallOptions {
  /** Give up after this many ms; the call's outcome is then unknown. Default: the store's call timeout. */
  timeoutMs?: number;
}

/** Options of a listing. */
export interface ScheduleListOptions extends ScheduleCallOptions {
  /** Include tombstones (removed schedules), as views do to order what they hear. Default `false`. */
  removed?: boolean;
}

/**
 * Hears the schedule map change. Events may be lost silently (HAZELCAST.md): a view never relies on them alone.
 */
export interface ScheduleWatcher {
  /** A record was written (`record`, a tombstone too) or disappeared (`undefined`: deleted by hand, or lost). */
  changed(id: string, record: ScheduleRecord | undefined): void;
  /** Events may have been missed (a disconnect, a reconnect, a member left, the map was cleared, lost data): re-read everything. */
  missed?(reason: MissedReason): void;
}

/** What a schedule store reports to its owner. */
export interface ScheduleStoreEvents {
  /** A stored value could not be read and was skipped (a listing, an event). */
  corruptValue?(key: string, reason: string): void;
}

/**
 * Where runtime schedules live: one record per schedule id, written only by compare-and-set of its exact stored
 * string. A node keeps its view fresh from the map's change feed, and lists again whenever the feed says changes may
 * have been missed (see `ScheduleView`). Every backend of the store contract serves it; all pass the same contract
 * suite.
 */
export interface ScheduleStore {
  /**
   * The staleness policy of a view on this store (see `resyncEveryMs`): how often it lists again whatever the feed
   * says, in ms, where the feed can lose events without telling; `undefined` where it tells every loss.
   */
  readonly resyncEveryMs?: number;
  /** Connects; called once before any other call. */
  connect(events?: ScheduleStoreEvents): Promise<void>;
  /** Disconnects; releases only what the store itself opened. */
  close(): Promise<void>;
  /** Reads one record (a tombstone too). A value this library cannot read throws `CorruptStateError`. */
  read(id: string, options?: ScheduleCallOptions): Promise<VersionedSchedule>;
  /** Every readable record, live ones only unless `removed`, sorted by id; unreadable ones are reported and skipped. */
  list(options?: ScheduleListOptions): Promise<VersionedSchedule[]>;
  /** Writes `next` only if the stored value is still `expected.raw` (`null`: creates). Returns false on conflict. */
  compareAndSet(id: string, expected: Pick<VersionedSchedule, 'raw'>, next: ScheduleRecord, options?: ScheduleCallOptions): Promise<boolean>;
  /**
   * Its reads and compare-and-sets inside the application's own database transaction (optional: a store whose
   * backend can, the PostgreSQL one): a change written there commits with the application's rows or not at all.
   */
  inTransaction?(transaction: SqlTransaction): Pick<ScheduleStore, 'read' | 'compareAndSet'>;
  /** Hears changes of the map; returns the unsubscribe. Events may be lost. */
  watch(watcher: ScheduleWatcher): () => void;
  /**
   * For an id found absent: since when (epoch ms) the store cannot rule out that its record was lost with the
   * store's data (a Hazelcast cluster restarted, a database restored), or `undefined` when it cannot have been lost
   * (then it was deleted from outside the library, which writes tombstones). Nodes restore a lost record they still
   * hold. Optional: a store without it is taken never to lose data.
   */
  lostSince?(id: string, options?: ScheduleCallOptions): Promise<number | undefined>;
  /** How many calls this store has made to its backend so far (round trips, for the Hazelcast store). */
  operationCount(): number;
}
