import type { MissedReason } from '../store/record-map';
import type { Presence } from './presence';

/** Options of one presence-store call. */
export interface PresenceCallOptions {
  /** Give up after this many ms; the call's outcome is then unknown. */
  timeoutMs?: number;
}

/** What a presence store reports to its owner. */
export interface PresenceStoreEvents {
  /** A stored value could not be read and was skipped. */
  corruptValue?(key: string, reason: string): void;
}

/**
 * Where app instances announce themselves: one entry per instance, written only by that instance (so no
 * compare-and-set is needed) and removed by it at a graceful shutdown. Implementations: the Hazelcast store (the
 * cluster) and the memory store (one process); both pass the same contract suite.
 */
export interface PresenceStore {
  /** Connects; called once before any other call. */
  connect(events?: PresenceStoreEvents): Promise<void>;
  /** Disconnects; releases only what the store itself opened. */
  close(): Promise<void>;
  /** Writes (or renews) this instance's entry. */
  announce(presence: Presence, options?: PresenceCallOptions): Promise<void>;
  /** Removes an instance's entry (its own, at shutdown). */
  withdraw(instance: string, options?: PresenceCallOptions): Promise<void>;
  /** Every readable entry, live or not (unreadable ones are reported and skipped). */
  list(options?: PresenceCallOptions): Promise<Presence[]>;
  /**
   * Hears entries change (`null`: removed or expired); events may be lost, so owners also re-read when `missed` is
   * told that the feed may have lost some (why: a reconnect, a member left, lost data; `disconnected` while it is down).
   */
  watch(listener: (instance: string, presence: Presence | null) => void, missed?: (reason: MissedReason) => void): () => void;
  /**
   * The staleness policy of a view on this store (`resyncEveryMs` of lib/store/feed-staleness): how often to re-read
   * every entry whatever the feed says, or `undefined` where the feed tells every loss (re-read when told only).
   */
  readonly resyncEveryMs?: number;
  /** How many calls this store has made to its backend so far (round trips, for the Hazelcast store). */
  operationCount(): number;
}
