/**
 * The versioned record map: the one kind of state every capability keeps (a semaphore, an instance's presence, a
 * task, a schedule, a job's history). Named by what it promises, not by any store's API: Hazelcast implements it
 * with an IMap (`putIfAbsent` / `replaceIfSame` on the exact text), PostgreSQL with `UPDATE … WHERE value = $n`,
 * Redis with one Lua script per write, memory with a `Map`.
 */

/** A record as the store holds it: its key and its exact stored text, in the capability's own encoding. */
export interface StoredRecord {
  /** The record's key in its map. */
  readonly key: string;
  /**
   * The exact text stored. A compare-and-set names it as the value it expects; a value that carries a unique write id
   * (see `writeIdsOf`) also settles a write whose answer was lost (`readDecideWrite`).
   */
  readonly value: string;
}

/** Options of one call. */
export interface RecordCallOptions {
  /**
   * Give up after this many ms with `StoreTimeoutError`: the call's outcome is then unknown. Derive it from the lease
   * the call serves. Default: the backend's call timeout.
   */
  timeoutMs?: number;
}

/** Options of one write. */
export interface RecordWriteOptions extends RecordCallOptions {
  /**
   * For a compare-and-set that failed with `StoreTimeoutError`: called exactly once, later, with what became of it:
   * `true` if it landed after all (a store may apply a write it could not answer in time: a client that retries a
   * call the members refused during a migration), `false` if it did not, `undefined` if the store cannot tell.
   * Never called for a write that answered in time, or failed otherwise.
   */
  lateOutcome?: (landed: boolean | undefined) => void;
  /**
   * Only for {@link RecordMap.replace}: write only once the store's own clock reads at least this (epoch ms), else
   * answer `false`, as for a conflict. A decision that took a lease as lapsed on a node's count of the store's clock
   * has the store confirm it on its own clock, in the same write. A store without a clock of its own ignores it.
   */
  notBefore?: number;
  /**
   * A garbage-collection aid: the store may drop the record this long after this write (rounded up, and late). Never
   * a lease: decide on a time kept in the value. Default: kept until removed.
   */
  ttlMs?: number;
}

/**
 * What a change feed tells. Events can be lost without a sign on some stores (HAZELCAST.md): a view built on them
 * bounds how stale it may be and re-reads when told {@link RecordChanges.missed}.
 */
export interface RecordChanges {
  /** A record was written (`value`), or removed or expired (`null`). One key's changes arrive in order. */
  changed(key: string, value: string | null): void;
  /**
   * Changes may have been missed since the last one heard: re-read what you rely on. The reason: `'disconnected'`
   * (the connection to the store dropped: nothing is heard until it is back), `'reconnected'` (the connection came
   * back: whatever changed while it was down was not heard), `'member-left'` (part of the store went away: events it
   * held back may be lost, and data with them), `'cleared'` (every record of the map was cleared or evicted at once),
   * `'lost-data'` (the store lost data: a restart, a restore from an older backup, a failover that missed writes).
   */
  missed(reason: 'disconnected' | 'reconnected' | 'member-left' | 'cleared' | 'lost-data'): void;
  /**
   * A record was written, and the feed told some of its fields (`fields`) instead of its value: a backend that tells a
   * routine change of a large record by what its watchers act on (PostgreSQL's tasks table tells a new claim so). A
   * watcher that needs the value reads it. Optional: a watcher without it hears nothing of such changes.
   */
  fields?(key: string, fields: Readonly<Record<string, unknown>>): void;
}

/** Why a change feed says changes may have been missed (see {@link RecordChanges.missed}). */
export type MissedReason = Parameters<RecordChanges['missed']>[0];

/** What a watch asks for. */
export interface WatchOptions {
  /**
   * Leave out the values whose `"writeId"` field carries a write id with this mark (see `writtenByMark`): the
   * watcher's own writes, which it learns from their answers. The capabilities pass their backend's
   * `writeIdsOf(backend).mark`. A backend may ignore it and send them anyway. Removals are always sent. Default:
   * none left out.
   */
  exceptMark?: string;
}

/** How a map is opened. */
export interface RecordMapSpec {
  /**
   * Top-level fields of the JSON values that {@link RecordMap.findBy} is asked about; a backend may index them. Values
   * of a map with indexes must be JSON objects in the form `JSON.stringify` writes (a store may keep them parsed and
   * give back that form).
   */
  readonly indexes?: readonly string[];
  /**
   * The map's records are leases its capability rebuilds after a loss of data (the permits' semaphores): a store that
   * keeps data across restarts and finds itself restored to an earlier state (a backup, a replica promoted after it
   * missed writes) drops them and marks them lost ({@link RecordMap.lostSince}) rather than serve them, since a
   * restored lease may be one its holder has since given up and another node taken. A store that cannot be restored
   * to an earlier state ignores it. Default `false`: records are kept as restored.
   */
  readonly forgetOnRestore?: boolean;
}


/**
 * One map of records, written only by compare-and-set ({@link RecordMap.create}, {@link RecordMap.replace},
 * {@link RecordMap.remove}) except for records with a single writer ({@link RecordMap.put}, {@link RecordMap.delete}:
 * an instance's own presence). Every call has a deadline; every failure is a `StoreUnavailableError` (a
 * `StoreTimeoutError` when the deadline passed, a `QuorumLostError` when the store refused a minority side), so
 * callers fail closed; an unreadable answer is never a success.
 */
export interface RecordMap {
  /** The map's name within the backend (without the backend's prefix), for errors. */
  readonly name: string;

  /** One record, or `undefined` when there is none. */
  get(key: string, options?: RecordCallOptions): Promise<StoredRecord | undefined>;
  /** The records of `keys` that exist, in one call where the store can. */
  getMany(keys: readonly string[], options?: RecordCallOptions): Promise<StoredRecord[]>;
  /** Every record. */
  list(options?: RecordCallOptions): Promise<StoredRecord[]>;
  /** The records whose JSON value has `field` equal to `value` (a field named in the map's `indexes`). */
  findBy(field: string, value: string | number | boolean, options?: RecordCallOptions): Promise<StoredRecord[]>;

  /** Creates the record if there is none; false when one exists. */
  create(key: string, value: string, options?: RecordWriteOptions): Promise<boolean>;
  /**
   * Replaces `expected` by `value` only if the stored text is still exactly `expected.value`; false otherwise. A
   * backend may tell that by the write id a value opens with (`leadingWriteId`): writers never give two texts
   * one write id.
   */
  replace(expected: StoredRecord, value: string, options?: RecordWriteOptions): Promise<boolean>;
  /** Removes `expected` only if the stored text is still exactly `expected.value`; false otherwise. */
  remove(expected: StoredRecord, options?: RecordCallOptions): Promise<boolean>;
  /** Writes the record whatever it holds: only for records one instance alone writes (its presence). */
  put(key: string, value: string, options?: RecordWriteOptions): Promise<void>;
  /** Removes the record whatever it holds: only for records one instance alone writes. */
  delete(key: string, options?: RecordCallOptions): Promise<void>;

  /**
   * For a key found absent: since when (epoch ms) the store cannot rule out that a record under it was lost (its
   * data was rebuilt then), or `undefined` when nothing under it can have been lost. A durable store that never
   * loses acknowledged writes answers `undefined`.
   */
  lostSince(key: string, options?: RecordCallOptions): Promise<number | undefined>;
  /**
   * Records that a record under `key` went without being removed by its capability (evicted, expired, removed from
   * outside): from now on {@link RecordMap.lostSince} answers at least now for it, so whoever rebuilds it waits out
   * what it granted. A store may mark more keys than this one (Hazelcast marks the key's partition).
   */
  markLost(key: string, options?: RecordCallOptions): Promise<void>;
  /**
   * For a key found absent: the value the store dropped under it when it found itself restored to an earlier state
   * (a map opened with `forgetOnRestore`), if it kept it; `undefined` otherwise. What its capability rebuilds from
   * when no node remembers better (a permit's duration, to wait out). Optional: a store that never drops records
   * on a restore leaves it out.
   */
  lostValue?(key: string, options?: RecordCallOptions): Promise<string | undefined>;

  /**
   * Starts hearing this map's changes; resolves, once the watch is in place where changes are sent from, to the
   * function that stops it.
   */
  watch(changes: RecordChanges, options?: WatchOptions): Promise<() => Promise<void>>;
}

/** Stops a watch (what {@link RecordMap.watch} resolves to). */
export type Unwatch = Awaited<ReturnType<RecordMap['watch']>>;

/**
 * The text every value written with a write id of the instance whose mark is `mark` contains, and no other value: its
 * `"writeId"` field (in JSON, a quote inside a string is escaped, so no other field's text can hold it). What a watch
 * given the mark as `exceptMark` leaves out.
 */
export function writtenByMark(mark: string): string {
  return `"writeId":"${mark}.`;
}

/** The opening every value with a leading write id has, its write id captured (see {@link leadingWriteId}). */
const LEADING_WRITE_ID = /^\{"v":\d+,"revision":\d+,"writeId":"([A-Za-z0-9._:-]+)"/;

/**
 * The write id of a value that opens with it (`{"v":<n>,"revision":<n>,"writeId":"<id>",`: a semaphore's entry), or
 * `undefined`. A write id is one write's alone (see `writeIdsOf`), and a value is only ever replaced as a whole, so two
 * such values with the same write id are the same text: a backend may compare a record against the id instead of
 * the whole text (Redis sends it rather than the text). Ids of other characters than letters, digits and `._:-` are
 * not taken, so the store's side can read the stored one with the same pattern.
 */
export function leadingWriteId(value: string): string | undefined {
  return LEADING_WRITE_ID.exec(value)?.[1];
}
