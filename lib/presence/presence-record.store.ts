import type { MissedReason, RecordMap } from '../store/record-map';
import { MapHold } from '../store/map-hold';
import { resyncEveryMs } from '../store/feed-staleness';
import type { StoreBackend } from '../store/store-backend';
import type { Presence } from './presence';
import { encodePresence, PresenceReader } from './presence.codec';
import type { PresenceCallOptions, PresenceStore, PresenceStoreEvents } from './presence-store';

/** The record map presence lives in: one record per instance, written only by that instance. */
export const PRESENCE_MAP = 'presence';

/**
 * Presence on any backend of the store contract: one record per instance, each written only by its instance (so
 * `put`, no compare-and-set) with a time-to-live of twice its validity, so the store cleans up after instances that
 * died; liveness itself is judged by each record's `expiresAt`, never by the TTL. Changes come from the map's feed;
 * the tracker re-reads at once when the feed says it may have lost some, and on a feed that can lose events without
 * telling (a backend that does not say it tells every loss) every `resyncEveryMs` too.
 */
export class PresenceRecordStore implements PresenceStore {
  private readonly hold: MapHold;
  private operations = 0;
  private events: PresenceStoreEvents = {};
  private readonly reader = new PresenceReader(() => this.events.corruptValue?.bind(this.events));
  private readonly watchers = new Set<(instance: string, presence: Presence | null) => void>();
  private readonly missedWatchers = new Set<(reason: MissedReason) => void>();
  constructor(private readonly backend: StoreBackend) {
    this.hold = new MapHold(backend, PRESENCE_MAP, 'presence');
  }

  /** {@inheritDoc PresenceStore.resyncEveryMs} */
  get resyncEveryMs(): number | undefined {
    return resyncEveryMs(this.backend);
  }

  /** {@inheritDoc PresenceStore.connect} */
  async connect(events: PresenceStoreEvents = {}): Promise<void> {
    this.events = events;
    await this.hold.open({ changed: (instance, raw) => this.notify(instance, raw), missed: (reason) => this.missed(reason) });
  }

  /** {@inheritDoc PresenceStore.close} */
  async close(): Promise<void> {
    await this.hold.close();
  }

  /** {@inheritDoc PresenceStore.announce} */
  async announce(presence: Presence, options: PresenceCallOptions = {}): Promise<void> {
    const ttlMs = Math.max(1_000, 2 * (presence.expiresAt - presence.refreshedAt));
    await this.require().put(presence.instance, encodePresence(presence), { ...options, ttlMs });
  }

  /** {@inheritDoc PresenceStore.withdraw} */
  async withdraw(instance: string, options: PresenceCallOptions = {}): Promise<void> {
    await this.require().delete(instance, options);
  }

  /** {@inheritDoc PresenceStore.list} */
  async list(options: PresenceCallOptions = {}): Promise<Presence[]> {
    const records = await this.require().list(options);
    return records.flatMap(({ key, value }) => this.reader.read(key, value));
  }

  /** {@inheritDoc PresenceStore.watch} */
  watch(listener: (instance: string, presence: Presence | null) => void, missed?: (reason: MissedReason) => void): () => void {
    this.watchers.add(listener);
    if (missed) this.missedWatchers.add(missed);
    return () => {
      this.watchers.delete(listener);
      if (missed) this.missedWatchers.delete(missed);
    };
  }

  /** {@inheritDoc PresenceStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  private notify(instance: string, raw: string | null): void {
    const presence = raw === null ? null : (this.reader.read(instance, raw)[0] ?? null);
    for (const watcher of this.watchers) watcher(instance, presence);
  }

  private missed(reason: MissedReason): void {
    for (const watcher of [...this.missedWatchers]) watcher(reason);
  }

  /** The map, counting the call about to be made on it. */
  private require(): RecordMap {
    const map = this.hold.map();
    this.operations++;
    return map;
  }
}
