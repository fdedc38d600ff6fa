import { randomUUID } from 'node:crypto';
import { Client, LifecycleState, type ClientConfig, type IMap } from 'hazelcast-client';
import { StoreUnavailableError } from '../errors/store-unavailable.error';
import type { PermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';
import {
  decodeDefinition, decodePermitState, decodePermitStates, encodeDefinition, encodePermitState,
} from './permit-state.codec';
import type { PermitStore, PermitStoreEvents, VersionedPermitState } from './permit-store';
import { PermitStateView } from './permit-state.view';

const OWN_WRITE_EVENT_WAIT_MS = 5_000;
const EPOCH_KEY = 'epoch';

/** How the Hazelcast store reaches the cluster. */
export interface HazelcastStoreOptions {
  /**
   * A client the application already has. The store uses it but never shuts it down. Lifecycle events can only be
   * registered in a client's config, so with an injected client reconnects are noticed on the next failed call.
   */
  client?: Client;
  /**
   * Config for a client the store creates and owns (shut down on close). Merged over the store's defaults:
   * `connectionStrategy.reconnectMode: 'ASYNC'`, so calls fail fast while disconnected instead of blocking
   * for the 120 s invocation timeout.
   */
  clientConfig?: ClientConfig;
  /** Prefix of the IMaps: `<prefix>.definitions`, `<prefix>.permits` and `<prefix>.meta`. Default `'gatekeeper'`. */
  mapPrefix?: string;
}

/**
 * The product store: definitions and permit states in two Hazelcast IMaps, written with optimistic
 * compare-and-set (`putIfAbsent` / `replaceIfSame`) on canonical JSON strings. Definitions are cached locally and
 * kept current by an entry listener, and re-read after every reconnect because missed events are not replayed.
 */
export class HazelcastPermitStore implements PermitStore {
  private client?: Client;
  private definitions?: IMap<string, string>;
  private permits?: IMap<string, string>;
  private listenerId?: string;
  private cache = new Map<string, SemaphoreDefinition>();
  private events: PermitStoreEvents = {};
  private meta?: IMap<string, string>;
  private connected = false;
  /** Set when the connection dropped or a call failed: missed events must be made up for by a re-read. */
  private suspect = false;
  private resyncing?: Promise<void>;
  /** Between a DISCONNECTED and the next CONNECTED lifecycle event (owned clients only). */
  private offline = false;
  /** A random id this cluster's data carries; if it is gone or different after a reconnect, the data was lost. */
  private epoch?: string;
  /** The cluster lost its data and the owner has not yet put its definitions back. */
  private lostData = false;
  /** Counts definition events, per key the last one seen, so a reload never overwrites a newer event. */
  private eventCount = 0;
  private readonly lastEvent = new Map<string, number>();
  private readonly view = new PermitStateView();
  private permitListenerId?: string;
  private membershipListenerId?: string;
  private operations = 0;
  private readonly mapPrefix: string;
  /** This node's own definition writes whose entry events have not arrived yet (see {@link onEvent}). */
  private readonly ownWrites = new Map<string, { raw: string | null; at: number; landed: boolean }>();

  constructor(private readonly options: HazelcastStoreOptions = {}) {
    this.mapPrefix = options.mapPrefix ?? 'gatekeeper';
  }

  async connect(events: PermitStoreEvents = {}): Promise<void> {
    this.events = events;
    this.client = this.options.client ?? (await Client.newHazelcastClient(this.ownedClientConfig()));
    this.definitions = await this.client.getMap<string, string>(`${this.mapPrefix}.definitions`);
    this.permits = await this.client.getMap<string, string>(`${this.mapPrefix}.permits`);
    this.meta = await this.client.getMap<string, string>(`${this.mapPrefix}.meta`);
    const candidate = randomUUID();
    this.epoch = (await this.meta.putIfAbsent(EPOCH_KEY, candidate)) ?? candidate;
    this.listenerId = await listenToEntries(this.definitions, (name, raw) => this.onEvent(name, raw), () => {
      void this.reloadDefinitions().catch(() => undefined);
    });
    this.permitListenerId = await listenToEntries(this.permits, (name, raw) => this.view.observe(name, raw), () => this.view.clear());
    // A member leaving may mean lost data or missed events; an injected client gives no lifecycle events.
    this.membershipListenerId = this.client.getCluster().addMembershipListener({
      memberAdded: () => undefined,
      memberRemoved: () => this.distrust(),
    });
    await this.reloadDefinitions();
    this.connected = true;
  }

  async close(): Promise<void> {
    // Our own shutdown disconnects the client: that is not an outage to report.
    this.events = {};
    this.connected = false;
    if (this.listenerId && this.definitions) {
      await this.definitions.removeEntryListener(this.listenerId).catch(() => undefined);
    }
    if (this.permitListenerId && this.permits) {
      await this.permits.removeEntryListener(this.permitListenerId).catch(() => undefined);
    }
    if (this.membershipListenerId) this.client?.getCluster().removeMembershipListener(this.membershipListenerId);
    this.view.clear();
    if (this.client && !this.options.client) await this.client.shutdown();
    this.client = undefined;
  }

  isConnected(): boolean {
    return this.connected && (this.client?.getLifecycleService().isRunning() ?? false);
  }

  memberCount(): number | undefined {
    // The client's member list goes stale while disconnected; count nobody then.
    return this.isConnected() && !this.offline ? (this.client?.getCluster().getMembers().length ?? 0) : 0;
  }

  getDefinition(name: string): SemaphoreDefinition | undefined {
    return this.cache.get(name);
  }

  async readDefinition(name: string): Promise<SemaphoreDefinition | undefined> {
    const map = this.map('definitions');
    const raw = await this.call(() => map.get(name));
    return raw === null ? undefined : decodeDefinition(name, raw);
  }

  listDefinitions(): SemaphoreDefinition[] {
    return [...this.cache.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async saveDefinition(definition: SemaphoreDefinition, { ifAbsent = false } = {}): Promise<boolean> {
    const map = this.map('definitions');
    const raw = encodeDefinition(definition);
    let existing: string | null = null;
    const saved = await this.ownWrite(definition.name, raw, async () => {
      if (!ifAbsent) return (await map.set(definition.name, raw), true);
      existing = await map.putIfAbsent(definition.name, raw);
      return existing === null;
    });
    // The cluster just told us its value: a cache that has none yet (its event still on the way) takes it.
    if (existing !== null && !this.cache.has(definition.name)) this.apply(definition.name, existing);
    return saved;
  }

  async deleteDefinition(name: string): Promise<boolean> {
    const map = this.map('definitions');
    return this.ownWrite(name, null, async () => (await map.remove(name)) !== null);
  }

  async readPermitState(name: string): Promise<VersionedPermitState> {
    const map = this.map('permits');
    const raw = await this.call(() => map.get(name));
    this.view.observe(name, raw);
    return { raw, state: raw === null ? undefined : decodePermitState(name, raw) };
  }

  async compareAndSetPermitState(name: string, expected: VersionedPermitState, next: PermitState): Promise<boolean> {
    const map = this.map('permits');
    const raw = encodePermitState(next);
    let written: boolean;
    try {
      this.operations++;
      written = expected.raw === null
        ? (await map.putIfAbsent(name, raw)) === null
        : await map.replaceIfSame(name, expected.raw, raw);
    } catch (writeError) {
      // Writes are not retried by the client, so the outcome is unknown. The state carries a unique writeId:
      // if the stored value is exactly ours, the write landed.
      const stored = await this.call(() => map.get(name), writeError);
      written = stored === raw;
    }
    if (written) this.view.observe(name, raw);
    return written;
  }

  async listPermitStates(): Promise<Array<{ name: string; state: PermitState }>> {
    const map = this.map('permits');
    const entries = await this.call(() => map.entrySet());
    return decodePermitStates(entries, (key, reason) => this.events.corruptValue?.(key, reason));
  }

  async resetPermitState(name: string, state: PermitState): Promise<void> {
    const map = this.map('permits');
    await this.call(() => map.set(name, encodePermitState(state)));
  }

  peekPermitState(name: string): VersionedPermitState | undefined {
    return this.suspect ? undefined : this.view.peek(name);
  }

  operationCount(): number {
    return this.operations;
  }

  /** Events may have been missed or data lost: stop trusting the view until a resync. */
  private distrust(): void {
    this.view.clear();
    if (this.connected) {
      this.suspect = true;
      void this.resync();
    }
  }

  private ownedClientConfig(): ClientConfig {
    const config = this.options.clientConfig ?? {};
    return {
      ...config,
      connectionStrategy: { ...config.connectionStrategy, reconnectMode: config.connectionStrategy?.reconnectMode ?? 'ASYNC' },
      lifecycleListeners: [...(config.lifecycleListeners ?? []), (state) => this.onLifecycle(state)],
    } as ClientConfig;
  }

  private onLifecycle(state: LifecycleState): void {
    if (!this.connected) return;
    if (state === LifecycleState.DISCONNECTED) {
      this.offline = true;
      this.suspect = true;
      this.view.clear();
      this.events.disconnected?.();
    } else if (state === LifecycleState.CONNECTED) {
      this.offline = false;
      if (this.suspect) void this.resync();
    }
  }

  /**
   * After a disconnect (noticed by a lifecycle event, or by a failed call with an injected client): events missed
   * meanwhile are not replayed, so re-read the definitions; and if the epoch is gone or changed, the cluster was
   * restarted and lost its maps, which the owner repairs by publishing its definitions again.
   */
  private resync(): Promise<void> {
    this.resyncing ??= (async () => {
      try {
        const meta = this.map('meta');
        const candidate = randomUUID();
        const current = (await meta.putIfAbsent(EPOCH_KEY, candidate)) ?? candidate;
        this.lostData ||= current !== this.epoch;
        this.epoch = current;
        if (this.lostData) {
          // Let the owner put its definitions back before the cache is re-read, so it never runs empty.
          await this.events.reconnected?.(true);
          this.lostData = false;
          await this.reloadDefinitions();
        } else {
          await this.reloadDefinitions();
          await this.events.reconnected?.(false);
        }
        this.suspect = false;
      } catch {
        // Still unreachable: the next reconnect or successful call tries again.
      } finally {
        this.resyncing = undefined;
      }
    })();
    return this.resyncing;
  }

  /**
   * The writer sees its own write at once, before its entry event arrives. Events for one key arrive in write
   * order, so once our write has landed, any event for that key until our own comes back is older than what
   * the cache holds and is skipped; otherwise a late event would briefly undo the edit just made.
   */
  private async ownWrite(name: string, raw: string | null, write: () => Promise<boolean>): Promise<boolean> {
    // Marked before writing: our own event can arrive before the call returns.
    const mark = { raw, at: Date.now(), landed: false };
    this.ownWrites.set(name, mark);
    let changed = false;
    try {
      changed = await this.call(write);
    } finally {
      if (this.ownWrites.get(name) === mark) {
        if (changed) {
          mark.landed = true;
          this.apply(name, raw);
        } else {
          this.ownWrites.delete(name); // nothing was written, so no event of ours will come
        }
      }
    }
    return changed;
  }

  private onEvent(name: string, raw: string | null): void {
    this.lastEvent.set(name, ++this.eventCount);
    const own = this.ownWrites.get(name);
    if (own?.raw === raw) {
      this.ownWrites.delete(name);
    } else if (own?.landed && Date.now() - own.at < OWN_WRITE_EVENT_WAIT_MS) {
      // Older than our landed write. The time bound keeps a write whose event never comes from muting the key.
      return;
    }
    this.apply(name, raw);
  }

  private async reloadDefinitions(): Promise<void> {
    this.ownWrites.clear();
    const map = this.map('definitions');
    const startedAt = this.eventCount;
    const entries = await this.call(() => map.entrySet());
    // A key with an event newer than the snapshot already holds a fresher value than the snapshot's.
    const stale = (name: string) => (this.lastEvent.get(name) ?? 0) > startedAt;
    const names = new Set(entries.map(([name]) => name));
    for (const name of [...this.cache.keys()]) if (!names.has(name) && !stale(name)) this.apply(name, null);
    for (const [name, raw] of entries) if (!stale(name)) this.apply(name, raw);
  }

  private apply(name: string, raw: string | null): void {
    const before = this.cache.get(name);
    if (raw === null) {
      this.cache.delete(name);
    } else {
      try {
        this.cache.set(name, decodeDefinition(name, raw));
      } catch (error) {
        this.cache.delete(name);
        this.events.corruptValue?.(name, (error as Error).message);
      }
    }
    const after = this.cache.get(name);
    if (before === after || (before && after && encodeDefinition(before) === encodeDefinition(after))) return;
    this.events.definitionChanged?.({ name, definition: after });
  }

  private map(which: 'definitions' | 'permits' | 'meta'): IMap<string, string> {
    const map = which === 'definitions' ? this.definitions : which === 'permits' ? this.permits : this.meta;
    if (!map) throw new StoreUnavailableError('The Hazelcast store is not connected yet');
    return map;
  }

  /** Runs a cluster call, turning any client failure into {@link StoreUnavailableError} (callers fail closed). */
  private async call<T>(operation: () => Promise<T>, earlier?: unknown): Promise<T> {
    try {
      this.operations++;
      const result = await operation();
      // With an injected client there are no lifecycle events: a call that works after one that failed is the
      // sign that the connection is back.
      if (this.suspect && this.connected) void this.resync();
      return result;
    } catch (error) {
      this.suspect = this.connected;
      this.view.clear();
      const cause = earlier ?? error;
      throw new StoreUnavailableError(`Hazelcast call failed: ${(cause as Error).message ?? String(cause)}`, { cause });
    }
  }
}

/**
 * Subscribes to every change of `map`'s entries with their values: `apply(key, value)` on a write, `apply(key,
 * null)` when an entry goes, `reset()` when the whole map is cleared or evicted.
 */
function listenToEntries(
  map: IMap<string, string>,
  apply: (key: string, raw: string | null) => void,
  reset: () => void,
): Promise<string> {
  return map.addEntryListener(
    {
      added: (e) => apply(e.key, e.value),
      updated: (e) => apply(e.key, e.value),
      merged: (e) => apply(e.key, e.value),
      removed: (e) => apply(e.key, null),
      evicted: (e) => apply(e.key, null),
      expired: (e) => apply(e.key, null),
      mapCleared: reset,
      mapEvicted: reset,
    },
    undefined,
    true,
  );
}
