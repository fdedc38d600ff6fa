import type { IMap } from 'hazelcast-client';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { StoreCalls } from '../backends/hazelcast/store-call';
import type { Presence } from './presence';
import { encodePresence, PresenceReader } from './presence.codec';
import type { PresenceCallOptions, PresenceStore, PresenceStoreEvents } from './presence-store';

/** How the Hazelcast presence store finds its map. */
export interface HazelcastPresenceStoreOptions {
  /** The process's shared connection. */
  connection: HazelcastConnection;
  /** Prefix of the IMap: `<prefix>.presence`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a call given none. Default 10 s. */
  callTimeoutMs?: number;
}

/**
 * Presence in a Hazelcast IMap, one entry per instance, each written only by its instance. Entries are put with a
 * time-to-live of twice their validity, so the map cleans up after instances that died; liveness itself is judged
 * by each entry's `expiresAt`, never by the TTL.
 */
export class HazelcastPresenceStore implements PresenceStore {
  private map?: IMap<string, string>;
  /** Whether connect() opened (or is opening) the shared connection, so close() must close it once. */
  private opened = false;
  private listenerId?: string;
  private events: PresenceStoreEvents = {};
  private readonly reader = new PresenceReader(() => this.events.corruptValue?.bind(this.events));
  private readonly watchers = new Set<(instance: string, presence: Presence | null) => void>();
  private readonly mapName: string;
  private readonly calls: StoreCalls;

  constructor(private readonly options: HazelcastPresenceStoreOptions) {
    this.mapName = `${options.mapPrefix ?? 'gatekeeper'}.presence`;
    this.calls = new StoreCalls(options.connection, 'presence', options.callTimeoutMs ?? 10_000);
  }

  async connect(events: PresenceStoreEvents = {}): Promise<void> {
    this.events = events;
    this.opened = true;
    try {
      const client = await this.options.connection.open();
      const map = await this.call(() => client.getMap<string, string>(this.mapName), 'open the presence map', {});
      this.map = map;
      this.listenerId = await this.call(() => map.addEntryListener(
        {
          added: (e) => this.notify(e.key, e.value),
          updated: (e) => this.notify(e.key, e.value),
          merged: (e) => this.notify(e.key, e.value),
          removed: (e) => this.notify(e.key, null),
          evicted: (e) => this.notify(e.key, null),
          expired: (e) => this.notify(e.key, null),
        },
        undefined,
        true,
      ), 'listen to the presence map', {});
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.listenerId && this.map) await this.map.removeEntryListener(this.listenerId).catch(() => undefined);
    this.listenerId = undefined;
    this.map = undefined;
    if (!this.opened) return;
    this.opened = false;
    await this.options.connection.close();
  }

  async announce(presence: Presence, options: PresenceCallOptions = {}): Promise<void> {
    const map = this.requireMap();
    const ttlMs = Math.max(1_000, 2 * (presence.expiresAt - presence.refreshedAt));
    await this.call(() => map.set(presence.instance, encodePresence(presence), ttlMs), `announce ${presence.instance}`, options);
  }

  async withdraw(instance: string, options: PresenceCallOptions = {}): Promise<void> {
    const map = this.requireMap();
    await this.call(() => map.delete(instance), `withdraw ${instance}`, options);
  }

  async list(options: PresenceCallOptions = {}): Promise<Presence[]> {
    const map = this.requireMap();
    const entries = await this.call(() => map.entrySet(), 'list presence', options);
    return entries.flatMap(([instance, raw]) => this.read(instance, raw));
  }

  watch(listener: (instance: string, presence: Presence | null) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  operationCount(): number {
    return this.calls.count();
  }

  private notify(instance: string, raw: string | null | undefined): void {
    const presence = raw === null || raw === undefined ? null : (this.read(instance, raw)[0] ?? null);
    for (const watcher of this.watchers) watcher(instance, presence);
  }

  private read(instance: string, raw: string): Presence[] {
    return this.reader.read(instance, raw);
  }

  private requireMap(): IMap<string, string> {
    if (!this.map) throw new StoreUnavailableError('the presence store is not connected');
    return this.map;
  }

  /** One cluster call, through the home of every store call (deadline, failures mapped to the library's errors). */
  private call<T>(operation: () => Promise<T>, what: string, options: PresenceCallOptions): Promise<T> {
    return this.calls.run(operation, what, options.timeoutMs);
  }
}
