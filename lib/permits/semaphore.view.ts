import type { SemaphoreEntry } from './semaphore-entry';
import { decodeEntry } from './semaphore-entry.codec';
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
  entry: SemaphoreEntry | undefined;
  seenAt: number;
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
  private readonly listeners = new Set<(name: string, entry: SemaphoreEntry | undefined) => void>();

  constructor(private readonly monotonicNow: () => number = () => performance.now()) {}

  /** What this node knows of `name`, if anything (an unreadable value counts as unknown). */
  peek(name: string): ObservedEntry | undefined {
    const absentSince = this.absent.get(name);
    if (absentSince !== undefined) return { entry: undefined, raw: null, ageMs: this.monotonicNow() - absentSince };
    const known = this.known.get(name);
    if (!known || (known.raw !== null && !known.entry)) return undefined;
    return { entry: known.entry, raw: known.raw, ageMs: this.monotonicNow() - known.seenAt };
  }

  /** Every known, readable entry, sorted by name. */
  entries(): Array<{ name: string; entry: SemaphoreEntry }> {
    return [...this.known]
      .filter(([, k]) => k.entry)
      .map(([name, k]) => ({ name, entry: k.entry! }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The newest readable entry this node ever saw of `name`, even if it is gone or unreadable now. */
  remembered(name: string): SemaphoreEntry | undefined {
    return this.remembered_.get(name);
  }

  /**
   * Records a value the store just confirmed by read, write or event (`raw`, or `null` when the entry is absent).
   * An entry older than the one known is ignored (a late event); absence always counts: nothing removes an
   * entry, so an absent one was lost. Returns why `raw` cannot be read, if it cannot. `decoded` is `raw` already
   * decoded by the caller (its own write, a read it decoded), so it is not decoded twice.
   */
  observe(name: string, raw: string | null, decoded?: SemaphoreEntry): string | undefined {
    const seenAt = this.monotonicNow();
    if (raw === null && !this.remembered_.has(name)) return this.observeAbsent(name, seenAt);
    this.absent.delete(name);
    const previous = this.known.get(name);
    if (previous && previous.raw === raw) {
      // The same value again (the event of this node's own write, a re-read): confirmed now, nothing to decode.
      previous.seenAt = seenAt;
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
    if (previous?.entry && entry && previous.entry.revision > entry.revision) return undefined;
    if (entry && entry.revision >= (this.remembered_.get(name)?.revision ?? 0)) this.remembered_.set(name, entry);
    this.known.set(name, { raw, entry, seenAt });
    for (const listener of this.listeners) listener(name, entry);
    return unreadable;
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
    if (changed) for (const listener of this.listeners) listener(name, undefined);
    return undefined;
  }

  /** Calls `listener` on every change of an entry; returns the unsubscribe function. */
  subscribe(listener: (name: string, entry: SemaphoreEntry | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets everything (events may have been missed); what it remembers for rebuilds is kept. */
  clear(): void {
    this.known.clear();
    this.absent.clear();
  }
}
