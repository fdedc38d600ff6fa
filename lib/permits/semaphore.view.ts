import type { SemaphoreEntry } from './semaphore-entry';
import { decodeEntry, encodedRevision } from './semaphore-entry.codec';
import { RecentMap } from '../core/recent-map';

/** An entry as this node last saw it, and how old that knowledge is. */
export interface ObservedEntry {
  /** The decoded entry, or `undefined` when the store had none. */
  readonly entry: SemaphoreEntry | undefined;
  /** The exact stored value (`null` if absent), for compare-and-set. */
  readonly raw: string | null;
  /** How long ago (ms, this process's monotonic clock) the store last confirmed this value by read, write or event. */
  readonly ageMs: number;
}

interface Known {
  raw: string | null;
  /** `undefined` when absent or unreadable, and until `raw` is decoded. */
  entry: SemaphoreEntry | undefined;
  /** Whether `raw` was decoded (or is `null`); until then `revision` is the one its first bytes give. */
  decoded: boolean;
  revision: number | undefined;
  seenAt: number;
}

/** A listener of the view, and the names it needs to hear of (all when `wants` is absent). */
interface Listener {
  readonly listener: (name: string, entry: SemaphoreEntry | undefined) => void;
  readonly wants?: (name: string) => boolean;
}

/**
 * How many names the store confirmed absent, never having shown this node a readable entry under them, the view
 * keeps at least (the most recently confirmed; at most twice as many). Callers may build names from input, so
 * these must not grow with them; a few thousand cover every semaphore a node's own jobs ask for, in about 1 MB.
 */
export const ABSENT_NAMES_CAP = 4_096;

/**
 * The newest entry this node has seen per semaphore, from its own reads and writes and from the cluster's entry
 * events. It lets a node decide without a round trip, but only from knowledge younger than a stated bound:
 * events can be lost without any signal, so an entry nobody has confirmed for a while is read again.
 *
 * Revisions only grow, so an older event arriving late never overwrites a newer entry. Listeners hear every
 * change of a known entry (leases use this to learn at once that their permit was revoked or excluded).
 */
export class SemaphoreView {
  /** Names the store held a value under (readable or not), and lost ones this node once read: bounded by the store's entries. */
  private readonly known = new Map<string, Known>();
  /**
   * When the store last confirmed absent each name that never had a readable entry here, for the
   * {@link ABSENT_NAMES_CAP} most recent at least. Forgetting one is safe: no permit of it was ever seen here, so no
   * revision or token is at stake, and the next decision on it reads the store instead of denying from the view
   * (one round trip). What is kept for lost entries (`remembered_`, and their absence in `known`) is never dropped.
   */
  private readonly absent = new RecentMap<string, number>(ABSENT_NAMES_CAP);
  /**
   * The newest readable entry ever seen per name, kept across loss and corruption: what a rebuild starts from, so
   * tokens and revisions never go back. Never forgotten; bounded by the entries the store ever held (each one a
   * definition someone wrote), not by the names callers ask for.
   */
  private readonly remembered_ = new Map<string, SemaphoreEntry>();
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly monotonicNow: () => number = () => performance.now(),
    /** Told when a value kept undecoded turns out unreadable once decoded (the store reports it as corrupt). */
    private readonly onUnreadable: (name: string, reason: string) => void = () => undefined,
  ) {}

  /** What this node knows of `name`, if anything (an unreadable value counts as unknown). */
  peek(name: string): ObservedEntry | undefined {
    const absentSince = this.absent.get(name);
    if (absentSince !== undefined) return { entry: undefined, raw: null, ageMs: this.monotonicNow() - absentSince };
    const known = this.known.get(name);
    if (!known || (known.raw !== null && !this.decoded(name, known).entry)) return undefined;
    return { entry: known.entry, raw: known.raw, ageMs: this.monotonicNow() - known.seenAt };
  }

  /** Every known, readable entry, sorted by name. */
  entries(): Array<{ name: string; entry: SemaphoreEntry }> {
    return [...this.known]
      .filter(([name, k]) => this.decoded(name, k).entry)
      .map(([name, k]) => ({ name, entry: k.entry! }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The newest readable entry this node ever saw of `name`, even if it is gone or unreadable now. */
  remembered(name: string): SemaphoreEntry | undefined {
    const known = this.known.get(name);
    if (known) this.decoded(name, known);
    return this.remembered_.get(name);
  }

  /**
   * Records a value the store just confirmed by read, write or event (`raw`, or `null` when the entry is absent).
   * An entry older than the one known is ignored (a late event); absence always counts: nothing removes an
   * entry, so an absent one was lost. Returns why `raw` cannot be read, if it cannot. `decoded` is `raw` already
   * decoded by the caller (its own write, a read it decoded), so it is not decoded twice.
   *
   * A value no listener wants to hear of, in this library's encoding, is kept undecoded (its revision read from its
   * first bytes) until somebody asks for it: most events a node receives are of semaphores it does not decide on
   * before the next event of the same name replaces them. An unreadable one is then reported by `onUnreadable`.
   */
  observe(name: string, raw: string | null, decoded?: SemaphoreEntry): string | undefined {
    const seenAt = this.monotonicNow();
    const previous = this.known.get(name);
    // A value kept undecoded is decoded before it is lost, so a lost entry is remembered as if decoded on arrival.
    if (raw === null && previous) this.decoded(name, previous);
    if (raw === null && !this.remembered_.has(name)) return this.observeAbsent(name, seenAt);
    this.absent.delete(name);
    if (previous && previous.raw === raw) {
      // The same value again (a re-read, the answer after the event of an unmarked write): confirmed now, nothing to decode.
      previous.seenAt = seenAt;
      return undefined;
    }
    const revision = raw !== null && decoded === undefined && !this.wanted(name) ? encodedRevision(raw) : undefined;
    if (revision !== undefined) {
      const before = previous && (previous.decoded ? previous.entry?.revision : previous.revision);
      if (before !== undefined && before > revision) return undefined;
      // Still the newest readable entry for rebuilds until decoded: `remembered()` decodes first.
      this.known.set(name, { raw, entry: undefined, decoded: false, revision, seenAt });
      return undefined;
    }
    let entry: SemaphoreEntry | undefined;
    let unreadable: string | undefined;
    if (decoded !== undefined) {
      entry = decoded;
    } else if (raw !== null) {
      try {
        entry = decodeEntry(name, raw);
      } catch (error) {
        unreadable = (error as Error).message; // decide from the store, which reports it
      }
    }
    // Against a readable entry only, as when every value was decoded on arrival: an unreadable one orders nothing.
    if (previous && entry && (this.decoded(name, previous).entry?.revision ?? -1) > entry.revision) return undefined;
    if (entry) this.remember(name, entry);
    this.known.set(name, { raw, entry, decoded: true, revision: entry?.revision, seenAt });
    this.tell(name, entry);
    return unreadable;
  }

  /** `known` with its value decoded, if it was kept undecoded (an unreadable one reported once). */
  private decoded(name: string, known: Known): Known {
    if (known.decoded || known.raw === null) return known;
    known.decoded = true;
    try {
      known.entry = decodeEntry(name, known.raw);
      this.remember(name, known.entry);
    } catch (error) {
      this.onUnreadable(name, (error as Error).message);
    }
    return known;
  }

  private remember(name: string, entry: SemaphoreEntry): void {
    if (entry.revision >= (this.remembered_.get(name)?.revision ?? 0)) this.remembered_.set(name, entry);
  }

  /** Whether a listener wants to hear of changes of `name`. */
  private wanted(name: string): boolean {
    for (const { wants } of this.listeners) if (!wants || wants(name)) return true;
    return false;
  }

  private tell(name: string, entry: SemaphoreEntry | undefined): void {
    for (const { listener, wants } of this.listeners) if (!wants || wants(name)) listener(name, entry);
  }

  /**
   * `name` is absent and never had a readable entry here: kept in the bounded {@link absent} list, not in `known`.
   * Listeners hear it only when it replaces a value (an unreadable one, or a first sight of the name).
   */
  private observeAbsent(name: string, seenAt: number): undefined {
    const had = this.known.get(name);
    const changed = had ? had.raw !== null : !this.absent.has(name);
    this.known.delete(name);
    this.absent.set(name, seenAt);
    if (changed) this.tell(name, undefined);
    return undefined;
  }

  /**
   * Calls `listener` on every change of an entry, or only of the names `wants` accepts (the others' values may
   * then stay undecoded until asked for); returns the unsubscribe function.
   */
  subscribe(listener: (name: string, entry: SemaphoreEntry | undefined) => void, wants?: (name: string) => boolean): () => void {
    const subscription: Listener = { listener, wants };
    this.listeners.add(subscription);
    return () => this.listeners.delete(subscription);
  }

  /** Forgets everything (events may have been missed); what it remembers for rebuilds is kept. */
  clear(): void {
    for (const [name, known] of this.known) this.decoded(name, known);
    this.known.clear();
    this.absent.clear();
  }
}
