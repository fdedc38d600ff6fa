import { randomUUID } from 'node:crypto';
import type { Client, ClientConfig, IMap } from 'hazelcast-client';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { Clock } from '../core/clock';
import type { SemaphoreEntry } from './semaphore-entry';
import { HazelcastConnection, type ConnectionState } from '../backends/hazelcast/hazelcast-connection';
import { CANARY_MAP, PartitionCanaries } from '../backends/hazelcast/hazelcast-partition-canaries';
import { StoreCalls } from '../backends/hazelcast/store-call';
import type { CallOptions, PermitStore, PermitStoreContext, PermitStoreEvents, VersionedEntry } from './permit-store';
import { decodeEntries, decodeEntry, encodeEntry, writeIdOf, writtenBy } from './semaphore-entry.codec';
import { listenToSemaphoreMap, stopListening, type SemaphoreMapListeners } from './hazelcast-semaphore-listeners';
import { ViewedPermitStore } from './viewed-permit.store';

/** A write of this node's in flight: what it writes, and whether the entry was seen absent meanwhile. */
interface OwnWrite {
  readonly raw: string;
  readonly entry: SemaphoreEntry;
  absenceSeen: boolean;
}

/** How the Hazelcast store reaches the cluster. */
export interface HazelcastStoreOptions {
  /**
   * A client the application already has. The store uses it but never shuts it down. Lifecycle events can only be
   * registered in a client's config, so with an injected client a lost connection is noticed on the next failed
   * call (and the view's age bound covers events missed meanwhile).
   */
  client?: Client;
  /**
   * Config for a client the store creates and owns (shut down on close). Merged over the store's defaults:
   * `connectionStrategy.reconnectMode: 'ASYNC'`, so calls fail fast while disconnected instead of blocking.
   */
  clientConfig?: ClientConfig;
  /** Prefix of the IMap: `<prefix>.semaphores`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a store call that serves no particular permit (edits, listings). Default 10 s. */
  callTimeoutMs?: number;
  /** How long the first connection may take: see `HazelcastConnectionOptions.connectTimeoutMs`. */
  connectTimeoutMs?: number;
  /**
   * A connection shared with the other capabilities of this process (the module passes its own); `client`,
   * `clientConfig` and `connectTimeoutMs` are then the connection's business. Default: a connection of this
   * store's own, made from them.
   * @internal The module passes its own; not an application option.
   */
  connection?: HazelcastConnection;
}

/**
 * The product store: one entry per semaphore in a Hazelcast IMap, written with optimistic compare-and-set
 * (`putIfAbsent` / `replaceIfSame`) on canonical JSON strings. Every call has a deadline. Each node keeps a view
 * of the entries fed by its reads, the answers to its writes and its listeners (the others' writes, every removal:
 * hazelcast-semaphore-listeners.ts); it is re-read after every reconnect and whenever a member leaves, because missed
 * events are not replayed, and the engine never trusts it beyond its age bound. Over 300 lines on purpose: the
 * view's suspicion and resync are one state machine with the calls that feed it.
 */
export class HazelcastPermitStore extends ViewedPermitStore implements PermitStore {
  private client?: Client;
  private map?: IMap<string, string>;
  private canaries?: PartitionCanaries;
  private listeners?: SemaphoreMapListeners;
  private membershipListenerId?: string;
  private events: PermitStoreEvents = {};
  private clock?: Clock;
  private connected = false;
  private readonly connection: HazelcastConnection;
  /** Whether connect() opened the connection, or is opening it (so close() must close it, or cancel the open). */
  private opened = false;
  private opening = false;
  private unsubscribe?: () => void;
  /** Set when the connection dropped or a call failed: missed events must be made up for by a re-read. */
  private suspect = false;
  /** Between a DISCONNECTED and the next CONNECTED lifecycle event (owned clients only). */
  private offline = false;
  private resyncing?: Promise<void>;
  /** Counts reasons to distrust the view, so a resync that began before the latest one runs again. */
  private distrusted = 0;
  private readonly mapName: string;
  private readonly calls: StoreCalls;
  /**
   * This node's writes in flight, by name, until their answer comes (even past their call's deadline): the event of
   * one of its writes that does not carry its mark (made with a writeId of the caller's) often arrives before the
   * answer, and would be decoded although the entry is at hand; a removal heard meanwhile is read again (see
   * `removed`), and an absence seen meanwhile keeps the answer from putting the value back (see `landed`).
   */
  private readonly writing = new Map<string, Set<OwnWrite>>();
  /**
   * When this node last heard each entry removed (epoch ms): a read that finds it absent reports it lost since then,
   * whatever the canary says yet. Bounded by the entries the store ever held (removals come only of those).
   */
  private readonly removedAt = new Map<string, number>();
  /** This store's mark in the writeIds it hands out (see {@link writeId}), and how many it handed out. */
  private readonly writer = randomUUID();
  private written = 0;
  /** Whether a value carries this store's mark. */
  private readonly ownValue = writtenBy(this.writer);

  constructor(private readonly options: HazelcastStoreOptions = {}) {
    super();
    this.mapName = `${options.mapPrefix ?? 'gatekeeper'}.semaphores`;
    this.connection = options.connection ?? new HazelcastConnection(options);
    this.calls = new StoreCalls(this.connection, 'permits', options.callTimeoutMs ?? 10_000);
  }

  async connect({ clock, events = {} }: PermitStoreContext): Promise<void> {
    this.events = events;
    this.clock = clock;
    try {
      this.opening = true;
      try {
        this.client = await this.connection.open();
      } finally {
        this.opening = false;
      }
      this.opened = true;
      this.unsubscribe = this.connection.onState((state) => this.onConnectionState(state));
      const client = this.client;
      const map = await this.call(() => client.getMap<string, string>(this.mapName), 'open the semaphore map');
      this.map = map;
      this.canaries = new PartitionCanaries(client, await this.call(() => client.getMap<string, string>(CANARY_MAP), 'open the canary map'), clock);
      // Not sent its own writes (compareAndSet records them from their answers); see listenToSemaphoreMap.
      this.listeners = await listenToSemaphoreMap(
        map,
        this.writer,
        { heard: (name, value) => this.heard(name, value), removed: (name) => this.removed(name), vanished: (name) => this.vanished(name), cleared: () => this.distrust() },
        (operation) => this.call(operation, 'listen to the semaphore map'),
      );
      // A member leaving may mean lost data or missed events; an injected client gives no lifecycle events.
      this.membershipListenerId = this.client.getCluster().addMembershipListener({
        memberAdded: () => undefined,
        memberRemoved: () => this.distrust(),
      });
      await this.reload();
      await this.canaries.ensure((op) => this.call(op, 'canaries'));
      this.connected = true;
    } catch (error) {
      // A failed start must not leave a client running that keeps the process alive.
      await this.close().catch(() => undefined);
      throw error;
    }
  }

  /** The cluster an owned client is configured for (name and member addresses), for logs and errors. */
  target(): { clusterName: string; members: string[] } {
    return this.connection.target();
  }

  async close(): Promise<void> {
    // Our own shutdown disconnects the client: that is not an outage to report.
    this.events = {};
    this.connected = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.listeners && this.map) await stopListening(this.map, this.listeners);
    if (this.membershipListenerId) this.client?.getCluster().removeMembershipListener(this.membershipListenerId);
    this.listeners = undefined;
    this.membershipListenerId = undefined;
    this.view.clear();
    this.client = undefined;
    // Closes a connection this store opened; one still opening (a background start) gives up.
    if (this.opened || this.opening) {
      this.opened = false;
      await this.connection.close();
    }
  }

  /** Connected, and nothing since the last successful resync suggests this node missed events. */
  isConnected(): boolean {
    return this.reachable() && !this.suspect;
  }

  memberCount(): number | undefined {
    // The client's member list goes stale while disconnected; count nobody then.
    return this.reachable() ? (this.client?.getCluster().getMembers().length ?? 0) : 0;
  }

  async read(name: string, options: CallOptions = {}): Promise<VersionedEntry> {
    const map = this.requireMap();
    const started = Date.now();
    const raw = await this.call(() => map.get(name), `read "${name}"`, options.timeoutMs);
    if (raw !== null) return { raw, entry: this.decodeRead(name, raw) };
    this.observeAbsent(name);
    const left = options.timeoutMs === undefined ? undefined : options.timeoutMs - (Date.now() - started);
    const intactSince = await this.canaries!.intactSince(name, (op) => this.call(op, `canary of "${name}"`, left));
    // A removal this node heard counts even before any node's renewal of the canary has landed.
    const removedAt = this.removedAt.get(name);
    const lostSince = intactSince === undefined ? removedAt : removedAt === undefined ? intactSince : Math.max(intactSince, removedAt);
    return lostSince === undefined ? { raw: null, entry: undefined } : { raw: null, entry: undefined, lostSince };
  }

  /** {@inheritDoc PermitStore.writeId} Marked as this store's, so its listener is not sent the write back. */
  writeId(): string {
    return writeIdOf(this.writer, this.written++);
  }

  async compareAndSet(name: string, expected: Pick<VersionedEntry, 'raw'>, next: SemaphoreEntry, options: CallOptions = {}): Promise<boolean> {
    const map = this.requireMap();
    const raw = encodeEntry(next);
    const what = `write "${name}"`;
    const started = Date.now();
    let written: boolean;
    const own: OwnWrite = { raw, entry: next, absenceSeen: false };
    this.track(name, own);
    let sent: Promise<boolean> | undefined;
    try {
      written = await this.call(
        () => (sent = expected.raw === null ? map.putIfAbsent(name, raw).then((previous) => previous === null) : map.replaceIfSame(name, expected.raw, raw)),
        what,
        options.timeoutMs,
        { settle: true },
      );
    } catch (error) {
      // The client may still be sending the write past its deadline (it retries a call the members refused, during
      // a migration for one), and it may land: its answer records it then, as no event will (a node's own writes
      // are left out of its listener). Revisions keep an answer that comes late from undoing a newer entry, and the
      // write stays tracked until then, so an absence seen meanwhile keeps it from putting a removed value back.
      if (sent) {
        void sent.then((won) => won && this.connected && this.map === map && this.landed(name, own), () => undefined).finally(() => this.untrack(name, own));
      } else {
        this.untrack(name, own);
      }
      if (error instanceof StoreTimeoutError || !(error instanceof StoreUnavailableError)) throw error;
      // The connection failed under the call, so the outcome is unknown. The entry carries a unique writeId:
      // if the stored value is exactly ours, the write landed. Events may have been missed in the drop (an edit's,
      // with an injected client that tells no disconnect): the view is read again whatever the settle finds.
      const left = options.timeoutMs === undefined ? undefined : Math.max(1, options.timeoutMs - (Date.now() - started));
      const stored = await this.call(() => map.get(name), what, left);
      this.distrust();
      written = stored === raw;
      if (written) this.landed(name, own);
      return written;
    }
    this.untrack(name, own);
    if (written) this.landed(name, own);
    return written;
  }

  /**
   * A write of this node's landed: its value goes into the view, unless an absence of the entry was seen while it
   * was in flight. Then which came first is unknown (a removal of the value before it, or of this very write, whose
   * answer comes after the removal's event and the read it caused), so the entry is read again rather than put back.
   */
  private landed(name: string, own: OwnWrite): void {
    if (own.absenceSeen) void this.read(name).catch(() => this.distrust());
    else this.view.observe(name, own.raw, own.entry);
  }

  private track(name: string, own: OwnWrite): void {
    const writes = this.writing.get(name);
    if (writes) writes.add(own);
    else this.writing.set(name, new Set([own]));
  }

  private untrack(name: string, own: OwnWrite): void {
    const writes = this.writing.get(name);
    if (writes?.delete(own) && writes.size === 0) this.writing.delete(name);
  }

  /** Records that `name` is absent in the store, and tells this node's writes of it in flight that it was seen so. */
  private observeAbsent(name: string): void {
    for (const own of this.writing.get(name) ?? []) own.absenceSeen = true;
    this.view.observe(name, null);
  }

  async list(options: CallOptions = {}): Promise<Array<{ name: string; entry: SemaphoreEntry }>> {
    const map = this.requireMap();
    const entries = await this.call(() => map.entrySet(), 'list', options.timeoutMs);
    for (const [name, raw] of entries) this.view.observe(name, raw);
    return decodeEntries(entries, (key, reason) => this.events.corruptValue?.(key, reason));
  }

  async readRaw(name: string, options: CallOptions = {}): Promise<string | null> {
    const map = this.requireMap();
    return this.call(() => map.get(name), `read "${name}"`, options.timeoutMs);
  }

  /** Decodes a value read from the store (throwing when unreadable), recorded in the view either way. */
  private decodeRead(name: string, raw: string): SemaphoreEntry {
    let entry: SemaphoreEntry;
    try {
      entry = decodeEntry(name, raw);
    } catch (error) {
      this.view.observe(name, raw);
      throw error;
    }
    this.view.observe(name, raw, entry);
    return entry;
  }

  /** @internal */
  protected reportUnreadable(name: string, reason: string): void {
    this.events.corruptValue?.(name, reason);
  }

  operationCount(): number {
    return this.calls.count();
  }

  /**
   * An entry disappeared without being lost with its partition (eviction, expiry: misconfigured maps) and left its
   * canary: renew it, so whoever rebuilds the entry still waits out its permits.
   */
  private vanished(name: string): void {
    this.observeAbsent(name);
    this.renewCanary(name);
  }

  /** Marks `name`'s partition as intact only from now on, so whoever rebuilds an entry that went waits out its permits. */
  private renewCanary(name: string): void {
    void this.canaries?.renew(name, (op) => this.call(op, 'renew canary')).catch(() => undefined);
  }

  private reachable(): boolean {
    return this.connected && !this.offline && (this.client?.getLifecycleService().isRunning() ?? false);
  }

  /** Events may have been missed or data lost: stop trusting the view until a resync. */
  private distrust(): void {
    if (!this.connected) return;
    this.suspect = true;
    this.distrusted++;
    void this.resync();
  }

  private onConnectionState(state: ConnectionState): void {
    if (!this.connected) return;
    if (state === 'disconnected') {
      this.offline = true;
      this.suspect = true;
      this.events.disconnected?.();
    } else {
      this.offline = false;
      if (this.suspect) void this.resync();
    }
  }

  /**
   * After a disconnect, a member loss or a failed call: events missed meanwhile are not replayed, so re-read every
   * entry. Entries this node knew that are now gone were lost with their partitions: the owner rebuilds the ones
   * it can. Missing canaries are written again.
   */
  private resync(): Promise<void> {
    this.resyncing ??= (async () => {
      try {
        // A member lost while this runs may have lost entries this reload already saw: run again then.
        for (let generation = -1; generation !== this.distrusted; ) {
          generation = this.distrusted;
          const before = new Set(this.view.entries().map((e) => e.name));
          const names = await this.reload();
          await this.canaries?.ensure((op) => this.call(op, 'canaries'));
          const lost = [...before].filter((name) => !names.has(name));
          if (generation === this.distrusted) this.suspect = false;
          if (lost.length > 0) await this.events.entriesLost?.(lost);
        }
        await this.events.reconnected?.();
      } catch {
        // Still unreachable: the next reconnect or successful call tries again.
      } finally {
        this.resyncing = undefined;
      }
    })();
    return this.resyncing;
  }

  /** Re-reads every entry into the view; returns the names present. */
  private async reload(): Promise<Set<string>> {
    const map = this.requireMap();
    const known = this.view.entries().map((e) => e.name);
    const entries = await this.call(() => map.entrySet(), 'reload');
    const names = new Set(entries.map(([name]) => name));
    for (const name of known) if (!names.has(name)) this.observeAbsent(name);
    for (const [name, raw] of entries) this.observe(name, raw);
    return names;
  }

  /**
   * An entry event: a value another node (or version, or operator) wrote. Apart from {@link observe}, which reads and
   * reloads feed too, so that what a node is sent can be told (and counted, as the contract test does).
   */
  private heard(name: string, value: string): void {
    this.observe(name, value);
  }

  /**
   * An entry was removed. No library code removes a semaphore's entry (a definition removed is an entry without one),
   * so the removal is a loss of its permits: the partition's canary is renewed, and whoever rebuilds the entry waits
   * them out. When the view holds a value this node wrote, or a write of its own is under way, the removal may be of
   * the value before it (answers and events travel apart, and no event follows to put this node's own write back), so
   * the entry is read again instead; a failed read leaves the view distrusted until a resync.
   */
  private removed(name: string): void {
    this.removedAt.set(name, this.clock?.now() ?? Date.now());
    this.renewCanary(name);
    const known = this.view.peek(name)?.raw;
    if (this.writing.has(name) || (typeof known === 'string' && this.ownValue(known))) {
      for (const own of this.writing.get(name) ?? []) own.absenceSeen = true;
      void this.read(name).catch(() => undefined);
    } else {
      this.view.observe(name, null);
    }
  }

  /** Records a value the store sent (event, reload) in the view, and reports it when it cannot be read. */
  private observe(name: string, raw: string): void {
    let decoded: SemaphoreEntry | undefined;
    for (const own of this.writing.get(name) ?? []) if (own.raw === raw) decoded = own.entry;
    const unreadable = this.view.observe(name, raw, decoded);
    if (unreadable) this.events.corruptValue?.(name, unreadable);
  }

  private requireMap(): IMap<string, string> {
    if (!this.map) throw new StoreUnavailableError('The Hazelcast store is not connected yet');
    return this.map;
  }

  /**
   * Runs a cluster call through the store's {@link StoreCalls} (deadline, and every failure a
   * {@link StoreUnavailableError}: callers fail closed). With an injected client there are no lifecycle events: a
   * call that works after one that failed is the sign that the connection is back, and the view is re-read.
   */
  private async call<T>(operation: () => Promise<T>, what: string, timeoutMs?: number, { settle = false } = {}): Promise<T> {
    try {
      const result = await this.calls.run(operation, what, timeoutMs);
      if (this.suspect && this.connected) void this.resync();
      return result;
    } catch (error) {
      // A timeout means a stalled member: what it will do with the call, and what events it held back, is
      // unknown, so the view is re-read before the next local answer. Other write failures are settled first.
      if (!settle || error instanceof StoreTimeoutError) this.suspect = this.connected;
      throw error;
    }
  }
}
