import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { Clock } from '../core/clock';
import type { MissedReason, RecordMap, Unwatch } from '../store/record-map';
import type { StoreBackend } from '../store/store-backend';
import type { SemaphoreEntry } from './semaphore-entry';
import type { CallOptions, PermitStore, PermitStoreContext, PermitStoreEvents, VersionedEntry } from './permit-store';
import { decodeEntries, decodeEntry, encodeEntry } from './semaphore-entry.codec';
import { ViewedPermitStore } from './viewed-permit.store';

/** The record map semaphores live in: one entry per semaphore, its definition and permits. */
export const SEMAPHORE_MAP = 'semaphores';

/** A write of this node's in flight: what it writes, and whether the entry was seen absent meanwhile. */
interface OwnWrite {
  readonly raw: string;
  readonly entry: SemaphoreEntry;
  absenceSeen: boolean;
}

/** The writeId an encoded entry carries (its third field, see `encodeEntry`). */
const WRITE_ID = /^\{"v":\d+,"revision":\d+,"writeId":"([^"]*)"/;

/**
 * Semaphores on any backend of the store contract: one entry per semaphore in the record map `semaphores`, written
 * only by compare-and-set on canonical JSON strings, every call with a deadline. Each node keeps a view of the
 * entries fed by its reads, the answers to its writes and the map's feed (without its own values: it records them
 * from their answers); the view is re-read whenever the feed says changes may have been missed, and the engine never
 * trusts it beyond its age bound. Over 300 lines on purpose: the view's suspicion and resync are one state machine
 * with the calls that feed it.
 */
export class PermitRecordStore extends ViewedPermitStore implements PermitStore {
  private map?: RecordMap;
  private unwatch?: Unwatch;
  private events: PermitStoreEvents = {};
  private clock?: Clock;
  private connected = false;
  /** Whether connect() opened the backend (so close() must close it). */
  private opened = false;
  /** Set when the connection dropped or a call failed: missed events must be made up for by a re-read. */
  private suspect = false;
  /** Between a 'disconnected' and the next 'reconnected' of the feed. */
  private offline = false;
  private resyncing?: Promise<void>;
  /** Counts reasons to distrust the view, so a resync that began before the latest one runs again. */
  private distrusted = 0;
  private operations = 0;
  /**
   * This node's writes in flight, by name, until their answer comes (even past their call's deadline): the event of
   * one of its writes that does not carry its mark (made with a writeId of the caller's) often arrives before the
   * answer, and would be decoded although the entry is at hand; a removal heard meanwhile is read again (see
   * `removed`), and an absence seen meanwhile keeps the answer from putting the value back (see `landed`).
   */
  private readonly writing = new Map<string, Set<OwnWrite>>();
  /**
   * When this node last heard each entry removed (epoch ms): a read that finds it absent reports it lost since then,
   * whatever the store says yet. Bounded by the entries the store ever held (removals come only of those).
   */
  private readonly removedAt = new Map<string, number>();
  /** How many removals of each entry this node heard: a read or reload answer that started before one is not taken into the view. */
  private readonly removals = new Map<string, number>();

  constructor(
    private readonly backend: StoreBackend,
    /** Deadline of a call given none, in ms. Default: the backend's. */
    private readonly callTimeoutMs?: number,
  ) {
    super();
  }

  /** {@inheritDoc PermitStore.connect} */
  async connect({ clock, events = {} }: PermitStoreContext): Promise<void> {
    this.events = events;
    this.clock = clock;
    try {
      // Held from the call on: a close() while the backend is still opening (a background start) makes it give up.
      this.opened = true;
      await this.backend.open();
      const map = await this.backend.map(SEMAPHORE_MAP);
      this.map = map;
      // Not sent its own values (compareAndSet records them from their answers); every removal is sent.
      this.unwatch = await map.watch({ changed: (name, value) => (value === null ? this.removed(name) : this.heard(name, value)), missed: (reason) => this.missed(reason) }, { exceptOwn: true });
      await this.reload();
      this.connected = true;
    } catch (error) {
      // A failed start must not leave a connection open that keeps the process alive.
      await this.close().catch(() => undefined);
      throw error;
    }
  }

  /** {@inheritDoc PermitStore.close} */
  async close(): Promise<void> {
    // Our own shutdown disconnects: that is not an outage to report.
    this.events = {};
    this.connected = false;
    await this.unwatch?.().catch(() => undefined);
    this.unwatch = undefined;
    this.view.clear();
    this.map = undefined;
    if (this.opened) {
      this.opened = false;
      await this.backend.close();
    }
  }

  /** Connected, and nothing since the last successful resync suggests this node missed events. */
  isConnected(): boolean {
    return this.reachable() && !this.suspect;
  }

  /** {@inheritDoc PermitStore.memberCount} */
  memberCount(): number | undefined {
    // A member list goes stale while disconnected; count nobody then.
    return this.reachable() ? this.backend.memberCount() : 0;
  }

  /** {@inheritDoc PermitStore.read} */
  async read(name: string, options: CallOptions = {}): Promise<VersionedEntry> {
    const map = this.requireMap();
    const started = Date.now();
    const removals = this.removals.get(name);
    const record = await this.call(() => map.get(name, this.timeout(options)));
    // A removal heard while the read was out may have come after the value it answers: the caller gets what the store
    // said, the view keeps the absence (a compare-and-set against the value then fails, and reads again).
    if (record) return { raw: record.value, entry: this.decodeRead(name, record.value, this.removals.get(name) === removals) };
    this.observeAbsent(name);
    const left = options.timeoutMs === undefined ? undefined : options.timeoutMs - (Date.now() - started);
    const storeSays = await this.call(() => map.lostSince(name, this.timeout({ timeoutMs: left })));
    // A removal this node heard counts even before the store says so.
    const removedAt = this.removedAt.get(name);
    const lostSince = storeSays === undefined ? removedAt : removedAt === undefined ? storeSays : Math.max(storeSays, removedAt);
    return lostSince === undefined ? { raw: null, entry: undefined } : { raw: null, entry: undefined, lostSince };
  }

  /** A new unique id for a write, marked as this node's so its feed is not sent the write back. */
  writeId(): string {
    return this.backend.writeId();
  }

  /** {@inheritDoc PermitStore.compareAndSet} */
  async compareAndSet(name: string, expected: Pick<VersionedEntry, 'raw'>, next: SemaphoreEntry, options: CallOptions = {}): Promise<boolean> {
    const map = this.requireMap();
    const raw = encodeEntry(next);
    const started = Date.now();
    let written: boolean;
    const own: OwnWrite = { raw, entry: next, absenceSeen: false };
    this.track(name, own);
    // The store may still apply a write past its deadline (Hazelcast's client retries a call the members refused,
    // during a migration for one), and it may land: its late answer records it then, as no event will (a node's own
    // values are left out of its feed). Revisions keep an answer that comes late from undoing a newer entry, and the
    // write stays tracked until then, so an absence seen meanwhile keeps it from putting a removed value back.
    const write = {
      ...this.timeout(options),
      lateOutcome: (landed: boolean | undefined) => {
        this.untrack(name, own);
        try {
          if (landed && this.connected && this.map === map) this.landed(name, own);
        } catch {
          // A view listener's failure is its own; the write is recorded.
        }
      },
    };
    try {
      written = await this.call(
        () => (expected.raw === null ? map.create(name, raw, write) : map.replace({ key: name, value: expected.raw }, raw, write)),
        { settle: true },
      );
    } catch (error) {
      // A timed-out write stays tracked until its late outcome; the others until they are settled here.
      if (error instanceof StoreTimeoutError) throw error;
      if (!(error instanceof StoreUnavailableError) || error instanceof QuorumLostError) {
        // Not an unknown outcome: a member refused the write (split-brain protection), or it never went out.
        this.untrack(name, own);
        throw error;
      }
      // The connection failed under the call, so the outcome is unknown. The entry carries a unique writeId:
      // if the stored value is exactly ours, the write landed. Events may have been missed in the drop (an edit's,
      // with an injected client that tells no disconnect): the view is read again whatever the settle finds, after
      // the write's landing is recorded (so the resync's reload sees it and corrects it if it went meanwhile).
      try {
        const left = options.timeoutMs === undefined ? undefined : Math.max(1, options.timeoutMs - (Date.now() - started));
        const stored = await this.call(() => map.get(name, this.timeout({ timeoutMs: left })));
        written = stored?.value === raw;
        if (written) this.landed(name, own);
      } finally {
        this.untrack(name, own);
        this.distrust();
      }
      return written;
    }
    this.untrack(name, own);
    if (written) this.landed(name, own);
    return written;
  }

  /** {@inheritDoc PermitStore.list} */
  async list(options: CallOptions = {}): Promise<Array<{ name: string; entry: SemaphoreEntry }>> {
    const map = this.requireMap();
    const removals = new Map(this.removals);
    const records = await this.call(() => map.list(this.timeout(options)));
    const entries = records.map(({ key, value }): [string, string] => [key, value]);
    // As for a read: an answer that started before a removal this node heard is not taken into the view.
    for (const [name, raw] of entries) if (this.removals.get(name) === removals.get(name)) this.view.observe(name, raw);
    return decodeEntries(entries, (key, reason) => this.events.corruptValue?.(key, reason));
  }

  /** {@inheritDoc PermitStore.readRaw} */
  async readRaw(name: string, options: CallOptions = {}): Promise<string | null> {
    const map = this.requireMap();
    return (await this.call(() => map.get(name, this.timeout(options))))?.value ?? null;
  }

  /** {@inheritDoc PermitStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  /** @internal */
  protected reportUnreadable(name: string, reason: string): void {
    this.events.corruptValue?.(name, reason);
  }

  /** Decodes a value read from the store (throwing when unreadable), recorded in the view either way unless `record` is false. */
  private decodeRead(name: string, raw: string, record = true): SemaphoreEntry {
    let entry: SemaphoreEntry;
    try {
      entry = decodeEntry(name, raw);
    } catch (error) {
      if (record) this.view.observe(name, raw);
      throw error;
    }
    if (record) this.view.observe(name, raw, entry);
    return entry;
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

  /**
   * An entry was removed (or evicted, or expired). No library code removes a semaphore's entry (a definition removed
   * is an entry without one), so it is a loss of its permits: the store is told (`markLost`), and whoever rebuilds the
   * entry waits them out; this node reads it as lost at once. When the view holds a value this node wrote, or a write
   * of its own is under way, the removal may be of the value before it (answers and events travel apart, and no event
   * follows to put this node's own write back), so the entry is read again instead; a failed read leaves the view
   * distrusted until a resync.
   */
  private removed(name: string): void {
    this.removedAt.set(name, this.clock?.now() ?? Date.now());
    this.removals.set(name, (this.removals.get(name) ?? 0) + 1);
    const map = this.map;
    if (map) void this.call(() => map.markLost(name)).catch(() => undefined);
    const known = this.view.peek(name)?.raw;
    if (this.writing.has(name) || (typeof known === 'string' && this.ownValue(known))) {
      for (const own of this.writing.get(name) ?? []) own.absenceSeen = true;
      void this.read(name).catch(() => undefined);
    } else {
      this.view.observe(name, null);
    }
  }

  /** Whether an encoded entry was written by this node (its writeId carries this backend instance's mark). */
  private ownValue(raw: string): boolean {
    const writeId = WRITE_ID.exec(raw)?.[1];
    return writeId !== undefined && this.backend.wroteId(writeId);
  }

  private reachable(): boolean {
    return this.connected && !this.offline && this.backend.isConnected();
  }

  /** The feed says changes may have been missed. */
  private missed(reason: MissedReason): void {
    if (!this.connected) return;
    if (reason === 'disconnected') {
      this.offline = true;
      this.suspect = true;
      this.events.disconnected?.();
    } else if (reason === 'reconnected') {
      this.offline = false;
      if (this.suspect) void this.resync();
    } else {
      this.distrust();
    }
  }

  /** Events may have been missed or data lost: stop trusting the view until a resync. */
  private distrust(): void {
    if (!this.connected) return;
    this.suspect = true;
    this.distrusted++;
    void this.resync();
  }

  /**
   * After a disconnect, a member loss or a failed call: events missed meanwhile are not replayed, so re-read every
   * entry. Entries this node knew that are now gone were lost: the owner rebuilds the ones it can.
   */
  private resync(): Promise<void> {
    this.resyncing ??= (async () => {
      try {
        // A loss while this runs may have taken entries this reload already saw: run again then.
        for (let generation = -1; generation !== this.distrusted; ) {
          generation = this.distrusted;
          const before = new Set(this.view.entries().map((e) => e.name));
          const names = await this.reload();
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

  /**
   * Re-reads every entry into the view; returns the names present. An entry the view held that the store no longer
   * has went without this node hearing it (events can be lost, a map can be cleared): it is marked lost in the store
   * before the caller rebuilds anything, so whoever rebuilds it, on any node, waits out its permits.
   */
  private async reload(): Promise<Set<string>> {
    const map = this.requireMap();
    const known = this.view.entries().map((e) => e.name);
    const held = new Set(known.filter((name) => typeof this.view.peek(name)?.raw === 'string'));
    const removals = new Map(this.removals);
    const records = await this.call(() => map.list());
    const names = new Set(records.map(({ key }) => key));
    const gone = [...held].filter((name) => !names.has(name));
    await Promise.all(gone.map((name) => this.call(() => map.markLost(name))));
    for (const name of known) if (!names.has(name)) this.observeAbsent(name);
    // A write in flight on a name the listing lacks may land after a removal this node never heard (events can be lost).
    for (const [name, writes] of this.writing) if (!names.has(name)) for (const own of writes) own.absenceSeen = true;
    for (const { key, value } of records) if (this.removals.get(key) === removals.get(key)) this.observe(key, value);
    return names;
  }

  /**
   * A value another node (or version, or operator) wrote, from the feed. Apart from `observe`, which reads and
   * reloads feed too, so that what a node is sent can be told (and counted, as the contract test does).
   */
  private heard(name: string, value: string): void {
    this.observe(name, value);
  }

  /** Records a value the store sent (event, reload) in the view, and reports it when it cannot be read. */
  private observe(name: string, raw: string): void {
    let decoded: SemaphoreEntry | undefined;
    for (const own of this.writing.get(name) ?? []) if (own.raw === raw) decoded = own.entry;
    const unreadable = this.view.observe(name, raw, decoded);
    if (unreadable) this.events.corruptValue?.(name, unreadable);
  }

  private requireMap(): RecordMap {
    if (!this.map) throw new StoreUnavailableError('The permit store is not connected yet');
    return this.map;
  }

  private timeout(options: CallOptions): CallOptions {
    return options.timeoutMs === undefined && this.callTimeoutMs !== undefined ? { timeoutMs: this.callTimeoutMs } : options;
  }

  /**
   * Runs one call on the map, counted. A call that works after one that failed is the sign that the connection is
   * back (a backend on an injected client tells no reconnect), and the view is re-read.
   */
  private async call<T>(operation: () => Promise<T>, { settle = false } = {}): Promise<T> {
    this.operations++;
    try {
      const result = await operation();
      if (this.suspect && this.connected) void this.resync();
      return result;
    } catch (error) {
      // A timeout means a stalled store: what it will do with the call, and what events it held back, is unknown,
      // so the view is re-read before the next local answer. Other write failures are settled first.
      if (!settle || error instanceof StoreTimeoutError) this.suspect = this.connected;
      throw error;
    }
  }
}
