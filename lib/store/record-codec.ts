/** How a view reads the records of one map. */
export interface RecordCodec<T> {
  /** Decodes a stored value; throws when it cannot be read (the message says why). */
  decode(key: string, raw: string): T;
  /** The record's revision: it only grows, so an older value arriving late never replaces a newer one. */
  revision(value: T): number;
  /**
   * The revision of a stored value read from its first bytes without decoding the rest, or `undefined` when only a
   * full decode can tell. Lets a view keep values nobody asks for undecoded. Optional.
   */
  encodedRevision?(raw: string): number | undefined;
  /**
   * Whether a key's revisions keep growing across its removal (records kept as tombstones, re-created above the last):
   * then a value at or below the newest one seen is old even once the key was seen absent (a late event after a
   * listing that found it gone). Default `false`: after a loss, whatever the store has next is taken in.
   */
  readonly revisionsOutliveRecords?: boolean;
}

/** A record as this node last saw it, and how old that knowledge is. */
export interface ObservedRecord<T> {
  /** The decoded record, or `undefined` when the store had none. */
  readonly entry: T | undefined;
  /** The exact stored value (`null` if absent), for compare-and-set. */
  readonly raw: string | null;
  /** How long ago (ms, this process's monotonic clock) the store last confirmed this value by read, write or event. */
  readonly ageMs: number;
}
