import { RecentMap } from '../core/recent-map';
import type { ObservedRecord, RecordCodec } from './record-codec';
import { HeardChanges, type ChangeMark, type RemovalMark } from './heard-changes';
import { WritesInFlight, type OwnWrite } from './writes-in-flight';
import { ViewListeners } from './view-listeners';

export type { ChangeMark, RemovalMark } from './heard-changes';
export type { OwnWrite } from './writes-in-flight';
export type { ObservedRecord, RecordCodec } from './record-codec';

interface Known<T> {
  raw: string | null;
  /** `undefined` when absent or unreadable, and until `raw` is decoded. */
  entry: T | undefined;
  /** Whether `raw` was decoded (or is `null`); until then `revision` is the one its first bytes give. */
  decoded: boolean;
  revision: number | undefined;
  seenAt: number;
}

/**
 * How many keys the store confirmed absent, never having shown this node a readable record under them, a view keeps
 * at least (the most recently confirmed; at most twice as many). Callers may build keys from input, so these must
 * not grow with them; a few thousand cover every key a node's own work asks for, in about 1 MB.
 */
export const ABSENT_NAMES_CAP = 4_096;

/**
 * The one event-fed view of a record map every capability keeps: the newest record this node has seen per key, from
 * its own reads, the answers to its own writes and the map's change feed, with how old that knowledge is. A node
 * answers from it without a round trip only while it is younger than the capability's bound (see
 * `WatchedRecords.fresh`): events can be lost without any sign.
 *
 * What keeps it from going back or putting back what the store no longer has, by construction:
 * - revisions only grow: an older value arriving late (an event, a listing) never overwrites a newer one;
 * - an absence always counts (a tombstone: it replaces any value), and a record once readable is remembered across
 *   its loss, so a rebuild starts from its newest revision;
 * - this node's writes in flight are tracked ({@link RecordView.beginWrite}): an absence seen while one is out
 *   keeps its answer, early or late, from putting the value back ({@link RecordView.landed} says to read again);
 * - removals heard are counted per key ({@link RecordView.removalMark}): a read or listing whose answer started
 *   before one is not taken in, as it may predate the removal.
 *
 * Listeners hear every change of a key they want; values no listener wants, in an encoding whose revision can be read
 * from its first bytes, are kept undecoded until asked for.
 */
export class RecordView<T> {
  /** Keys the store held a value under (readable or not), and lost ones this node once read: bounded by the store's records. */
  private readonly known = new Map<string, Known<T>>();
  /**
   * When the store last confirmed absent each key that never had a readable record here, for the
   * {@link ABSENT_NAMES_CAP} most recent at least. Forgetting one is safe: nothing of it was ever seen here, so no
   * revision is at stake, and the next decision on it reads the store (one round trip). What is kept for lost records
   * (`remembered_`, and their absence in `known`) is never dropped.
   */
  private readonly absent = new RecentMap<string, number>(ABSENT_NAMES_CAP);
  /**
   * The newest readable record ever seen per key, kept across loss and corruption: what a rebuild starts from, so
   * revisions never go back. Bounded by the records the store ever held, not by the keys callers ask for.
   */
  private readonly remembered_ = new Map<string, T>();
  private readonly listeners = new ViewListeners<T>();
  /** This node's writes in flight, until their answer comes (even past their call's deadline). */
  private readonly writing = new WritesInFlight<T>();
  /** What the feed told, counted for the reads and listings under way. */
  private readonly changes = new HeardChanges();

  constructor(
    private readonly codec: RecordCodec<T>,
    private readonly monotonicNow: () => number = () => performance.now(),
    /** Told when a value kept undecoded turns out unreadable once decoded (the store reports it as corrupt). */
    private readonly onUnreadable: (key: string, reason: string) => void = () => undefined,
  ) {}

  /** What this node knows of `key`, if anything (an unreadable value counts as unknown). */
  peek(key: string): ObservedRecord<T> | undefined {
    const absentSince = this.absent.get(key);
    if (absentSince !== undefined) return { entry: undefined, raw: null, ageMs: this.monotonicNow() - absentSince };
    const known = this.known.get(key);
    if (!known || (known.raw !== null && !this.decoded(key, known).entry)) return undefined;
    return { entry: known.entry, raw: known.raw, ageMs: this.monotonicNow() - known.seenAt };
  }

  /** Every known, readable record, sorted by key. */
  entries(): Array<{ name: string; entry: T }> {
    return [...this.known]
      .filter(([key, k]) => this.decoded(key, k).entry !== undefined)
      .map(([name, k]) => ({ name, entry: k.entry! }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The keys the view holds a value under (readable or not). */
  keys(): string[] {
    return [...this.known].filter(([, k]) => k.raw !== null).map(([key]) => key);
  }

  /** The newest readable record this node ever saw of `key`, even if it is gone or unreadable now. */
  remembered(key: string): T | undefined {
    const known = this.known.get(key);
    if (known) this.decoded(key, known);
    return this.remembered_.get(key);
  }

  /**
   * Records a value the store just confirmed by read, write or event (`raw`, or `null` when the record is absent).
   * A record older than the one known is ignored (a late event); an absence always counts. Returns why `raw` cannot
   * be read, if it cannot. `decoded` is `raw` already decoded by the caller, so it is not decoded twice.
   */
  observe(key: string, raw: string | null, decoded?: T): string | undefined {
    const seenAt = this.monotonicNow();
    const previous = this.known.get(key);
    if (raw === null) this.writing.sawAbsence(key);
    // A value kept undecoded is decoded before it is lost, so a lost record is remembered as if decoded on arrival.
    if (raw === null && previous) this.decoded(key, previous);
    if (raw === null && !this.remembered_.has(key)) return this.observeAbsent(key, seenAt);
    this.absent.delete(key);
    if (previous && previous.raw === raw) {
      // The same value again (a re-read, the answer after the event of an unmarked write): confirmed now.
      previous.seenAt = seenAt;
      return undefined;
    }
    if (raw !== null && decoded === undefined) decoded = this.writing.valueOf(key, raw);
    const revision = raw !== null && decoded === undefined && !this.listeners.wanted(key) ? this.codec.encodedRevision?.(raw) : undefined;
    if (revision !== undefined) {
      const before = previous && (previous.decoded ? this.revisionOf(previous.entry) : previous.revision);
      if (before !== undefined && before > revision) return undefined;
      this.known.set(key, { raw: raw!, entry: undefined, decoded: false, revision, seenAt });
      return undefined;
    }
    let entry: T | undefined;
    let unreadable: string | undefined;
    if (decoded !== undefined) {
      entry = decoded;
    } else if (raw !== null) {
      try {
        entry = this.codec.decode(key, raw);
      } catch (error) {
        unreadable = (error as Error).message; // decide from the store, which reports it
      }
    }
    // Against a readable record only: an unreadable one orders nothing.
    if (previous && entry !== undefined && (this.revisionOf(this.decoded(key, previous).entry) ?? -1) > this.codec.revision(entry)) return undefined;
    if (entry !== undefined && this.codec.revisionsOutliveRecords && (!previous || previous.raw === null)) {
      const floor = this.revisionOf(this.remembered_.get(key));
      if (floor !== undefined && floor >= this.codec.revision(entry)) return undefined;
    }
    if (entry !== undefined) this.remember(key, entry);
    this.known.set(key, { raw, entry, decoded: true, revision: this.revisionOf(entry), seenAt });
    this.listeners.tell(key, entry);
    return unreadable;
  }

  /**
   * Records what a read or listing begun at `mark` answered for `key`, unless a removal of it was heard since: the
   * answer may then predate the removal (the view keeps the absence; a compare-and-set against the value fails and
   * reads again). Returns why `raw` cannot be read, if it cannot.
   */
  observeRead(key: string, raw: string | null, mark: RemovalMark, decoded?: T): string | undefined {
    if (this.changes.removedSince(key, mark)) return undefined;
    return this.observe(key, raw, decoded);
  }

  /** A mark to take before a read or a listing (see {@link RecordView.observeRead}). */
  removalMark(): RemovalMark {
    return this.changes.removalMark();
  }

  /** A value the feed sent (another node's write): counted for listings under way (see {@link RecordView.observeListing}). */
  heard(key: string, raw: string, decoded?: T): string | undefined {
    this.changes.heard(key);
    return this.observe(key, raw, decoded);
  }

  /** A mark to take before a full listing (see {@link RecordView.observeListing}). */
  changeMark(): ChangeMark {
    return this.changes.changeMark(this.keys());
  }

  /** The keys the view holds that a full listing begun at `mark` lacks, and the feed did not change since it began. */
  goneFrom(records: ReadonlyArray<{ key: string }>, mark: ChangeMark): string[] {
    const listed = new Set(records.map((r) => r.key));
    // Only keys held when the listing began: one this node wrote or read meanwhile may be newer than the listing.
    return this.keys().filter((key) => mark.held.has(key) && !listed.has(key) && !this.changes.changedSince(key, mark));
  }

  /**
   * Takes in a full listing begun at `mark`: each record (unless removed since), and the absence of every record the
   * view holds that the listing lacks, unless the feed changed it since the listing began (the listing may predate
   * it). Returns the keys found gone, and why values listed cannot be read.
   */
  observeListing(records: ReadonlyArray<{ key: string; value: string }>, mark: ChangeMark): { gone: string[]; unreadable: Array<{ key: string; reason: string }> } {
    const listed = new Set(records.map((r) => r.key));
    const gone = this.goneFrom(records, mark);
    for (const key of gone) this.observe(key, null);
    // A write in flight on a key the listing lacks may land after a removal this node never heard (events can be lost).
    this.writing.sawAbsenceExcept(listed);
    const unreadable: Array<{ key: string; reason: string }> = [];
    for (const { key, value } of records) {
      const reason = this.observeRead(key, value, mark.removals);
      if (reason) unreadable.push({ key, reason });
    }
    return { gone, unreadable };
  }

  /**
   * The feed says `key` was removed. Returns `'read-again'` when the view holds a value this node wrote or a write of
   * its own is under way: the removal may be of the value before it (answers and events travel apart, and no event
   * follows to put this node's own write back), so the caller reads the record again; `'absent'` when the view now
   * holds the absence.
   */
  removed(key: string, wroteValue: (raw: string) => boolean = () => false): 'read-again' | 'absent' {
    this.changes.removed(key);
    const known = this.known.get(key)?.raw;
    if (this.writing.has(key) || (typeof known === 'string' && wroteValue(known))) {
      this.writing.sawAbsence(key);
      return 'read-again';
    }
    this.observe(key, null);
    return 'absent';
  }

  /** Tracks a write of this node's until {@link RecordView.endWrite}: the feed's copy of it is not decoded again. */
  beginWrite(key: string, raw: string, value: T): OwnWrite<T> {
    return this.writing.begin(key, raw, value);
  }

  /** The write's answer came (or it was settled): it is no longer in flight. */
  endWrite(key: string, own: OwnWrite<T>): void {
    this.writing.end(key, own);
  }

  /**
   * A write of this node's landed: its value goes into the view and `true` is returned, unless an absence of the
   * record was seen while it was in flight. Then which came first is unknown (a removal of the value before it, or of
   * this very write), so nothing is put back and `false` says to read the record again.
   */
  landed(key: string, own: OwnWrite<T>): boolean {
    if (own.absenceSeen) return false;
    this.observe(key, own.raw, own.value);
    return true;
  }

  /**
   * Calls `listener` on every change of a record, or only of the keys `wants` accepts (the others' values may then
   * stay undecoded until asked for); returns the unsubscribe function.
   */
  subscribe(listener: (key: string, entry: T | undefined) => void, wants?: (key: string) => boolean): () => void {
    return this.listeners.add(listener, wants);
  }

  /** Forgets everything (events may have been missed); what it remembers for rebuilds is kept. */
  clear(): void {
    for (const [key, known] of this.known) this.decoded(key, known);
    this.known.clear();
    this.absent.clear();
  }

  private revisionOf(entry: T | undefined): number | undefined {
    return entry === undefined ? undefined : this.codec.revision(entry);
  }

  /** `known` with its value decoded, if it was kept undecoded (an unreadable one reported once). */
  private decoded(key: string, known: Known<T>): Known<T> {
    if (known.decoded || known.raw === null) return known;
    known.decoded = true;
    try {
      known.entry = this.codec.decode(key, known.raw);
      this.remember(key, known.entry);
    } catch (error) {
      this.onUnreadable(key, (error as Error).message);
    }
    return known;
  }

  private remember(key: string, entry: T): void {
    const kept = this.remembered_.get(key);
    if (kept === undefined || this.codec.revision(entry) >= this.codec.revision(kept)) this.remembered_.set(key, entry);
  }

  /**
   * `key` is absent and never had a readable record here: kept in the bounded {@link absent} list, not in `known`.
   * Listeners hear it only when it replaces a value (an unreadable one, or a first sight of the key).
   */
  private observeAbsent(key: string, seenAt: number): undefined {
    const had = this.known.get(key);
    const changed = had ? had.raw !== null : !this.absent.has(key);
    this.known.delete(key);
    this.absent.set(key, seenAt);
    if (changed) this.listeners.tell(key, undefined);
    return undefined;
  }
}
