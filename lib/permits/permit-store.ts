import type { Clock } from '../core/clock';
import type { SemaphoreEntry } from './semaphore-entry';
import type { ObservedEntry } from './semaphore.view';

/** A semaphore's entry as read, with what the store needs to compare-and-set against it. */
export interface VersionedEntry {
  /** The decoded entry, or `undefined` when the store has none. */
  readonly entry: SemaphoreEntry | undefined;
  /** The exact stored value (`null` if absent). Opaque to callers. */
  readonly raw: string | null;
  /**
   * Only for an absent entry: the store cannot rule out that an entry under this name was lost since this time
   * (epoch ms), because the data around it was rebuilt then. `undefined`: nothing under this name was lost.
   */
  readonly lostSince?: number;
  /**
   * Only for an absent entry: the entry a restore of the store dropped under this name, when the store kept it (see
   * `RecordMap.lostValue`): rebuilding waits out its permits too, when this node remembers no newer one.
   */
  readonly restored?: SemaphoreEntry;
}

/** Options of one store call. */
export interface CallOptions {
  /** Give up after this many ms with `StoreTimeoutError`; the call's outcome is then unknown. */
  timeoutMs?: number;
}

/** Options of one compare-and-set. */
export interface WriteOptions extends CallOptions {
  /**
   * Write only once the store's own clock reads at least this (epoch ms), else answer `false` as for a conflict; a
   * store without a clock ignores it (see `RecordWriteOptions.notBefore`).
   */
  notBefore?: number;
}

/** Events the store reports to whoever owns it. */
export interface PermitStoreEvents {
  /** The store lost its connection; operations fail until {@link PermitStoreEvents.reconnected}. */
  disconnected?(): void;
  /** The connection came back and this node's knowledge was re-read. */
  reconnected?(): void | Promise<void>;
  /** Entries this node knew are gone from the cluster: their data was lost (nothing removes an entry). */
  entriesLost?(names: string[]): void | Promise<void>;
  /** A stored value could not be decoded and was skipped. */
  corruptValue?(key: string, reason: string): void;
}

/** What the owner gives the store when connecting. */
export interface PermitStoreContext {
  /** Where time is read (for the stamps a store writes itself). */
  clock: Clock;
  /** Who to tell. */
  events?: PermitStoreEvents;
}

/**
 * Where semaphores live: one entry per semaphore holding its definition and permits, written only by
 * compare-and-set. Implementations: `PermitRecordStore` (over any backend of the store contract) and
 * `HazelcastPermitStore` (the CLI's, on the cluster). Both pass the same contract suite.
 *
 * Each node also keeps a view of the entries it has seen (reads, writes, events), with the age of that knowledge,
 * for decisions that may be taken without a round trip.
 */
export interface PermitStore {
  /** Connects and loads the view. Called once by the owner before any other call. */
  connect(context: PermitStoreContext): Promise<void>;
  /** Disconnects; releases only what the store itself created (an injected client is left open). */
  close(): Promise<void>;
  /** Whether the store is connected right now and this node's view can be trusted (no events missed since it was last re-read). */
  isConnected(): boolean;
  /** How many cluster members the store can see now, or `undefined` when it has no cluster (memory). */
  memberCount(): number | undefined;

  /** Reads one entry. Throws `CorruptStateError` if it cannot be decoded, `StoreUnavailableError` if unreachable. */
  read(name: string, options?: CallOptions): Promise<VersionedEntry>;
  /**
   * Writes `next` only if the stored value is still `expected` (compare-and-set; `expected.raw === null` creates).
   * Returns false on conflict. A write whose outcome is unknown (connection lost mid-call) is settled by
   * re-reading; throws `StoreUnavailableError` when it cannot be, `StoreTimeoutError` past the deadline.
   */
  compareAndSet(name: string, expected: Pick<VersionedEntry, 'raw'>, next: SemaphoreEntry, options?: WriteOptions): Promise<boolean>;
  /**
   * A unique `writeId` for the next entry this node writes. Optional: without it, writers use a random UUID. A store
   * whose view is fed by change events may mark its own writes so it is not sent them back (it records a write it
   * made from the answer).
   */
  writeId?(): string;
  /** Every entry in the store. Unreadable ones are reported via `corruptValue` and skipped. */
  list(options?: CallOptions): Promise<Array<{ name: string; entry: SemaphoreEntry }>>;
  /** The exact stored value under `name`, readable or not (for an operator's repair of a corrupt one). */
  readRaw(name: string, options?: CallOptions): Promise<string | null>;

  /** What this node knows of `name` without asking the store, and how old that knowledge is. */
  peek(name: string): ObservedEntry | undefined;
  /** Every entry this node knows of, sorted by name. */
  known(): Array<{ name: string; entry: SemaphoreEntry }>;
  /** The newest readable entry this node ever saw of `name`, even if it is lost or unreadable now (for rebuilds). */
  remembered(name: string): SemaphoreEntry | undefined;
  /**
   * Calls `listener` whenever this node learns that an entry changed; returns the unsubscribe function. With
   * `wants`, only changes of the names it accepts (a store may then leave the others' values undecoded until asked
   * for); a store may ignore it and tell every change.
   */
  watch(listener: (name: string, entry: SemaphoreEntry | undefined) => void, wants?: (name: string) => boolean): () => void;
  /** How many calls this store has made to its backend so far (round trips, for the Hazelcast store). */
  operationCount(): number;
}
