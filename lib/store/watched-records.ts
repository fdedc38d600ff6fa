import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { MapHold } from './map-hold';
import type { RecordCallOptions, RecordMap, RecordWriteOptions, StoredRecord } from './record-map';
import type { ObservedRecord } from './record-codec';
import { RecordView } from './record-view';
import type { StoreBackend } from './store-backend';
import { writeIdsOf } from './write-ids';
import { ViewTrust } from './view-trust';
import { isUnknownOutcome } from './unknown-outcome';
import type { WatchedRecordsEvents, WatchedRecordsOptions } from './watched-records.options';

export type { WatchedRecordsEvents, WatchedRecordsOptions } from './watched-records.options';

/** A record read from the store, decoded. */
export interface ReadRecord<T> {
  readonly raw: string | null;
  readonly entry: T | undefined;
}

/**
 * One record map of a backend, watched into this node's {@link RecordView}: the one way a capability keeps an
 * event-fed view, with one staleness contract. The view is fed by this node's reads, the answers to its writes and
 * the map's feed (without this node's own values, taken from their answers). It is re-read whenever the feed says
 * changes may have been missed (a disconnect, a member lost, a cleared map, lost data), after a call timed out, and
 * after a write whose connection dropped; until then it is *suspect*, and {@link WatchedRecords.fresh} answers
 * nothing. A local answer is used only when {@link WatchedRecords.fresh} gives it: trusted, and confirmed by the store
 * within the caller's bound. That bound holds when events are lost, as every answer older than it is read again.
 */
export class WatchedRecords<T> {
  /** What this node has seen of the records. */
  readonly view: RecordView<T>;
  private readonly hold: MapHold;
  private events: WatchedRecordsEvents = {};
  private readonly trust: ViewTrust;
  private operations = 0;

  constructor(
    private readonly backend: StoreBackend,
    private readonly options: WatchedRecordsOptions<T>,
  ) {
    this.view = new RecordView(options.codec, options.monotonicNow, (key, reason) => this.events.corruptValue?.(key, reason));
    this.hold = new MapHold(backend, options.map, options.store, options.spec);
    this.trust = new ViewTrust(() => this.resyncOnce(), {
      disconnected: () => this.events.disconnected?.(),
      resynced: () => this.events.resynced?.(),
    });
  }

  /** Opens the map, watches it (without this node's own values) and reads every record into the view. */
  async open(events: WatchedRecordsEvents = {}): Promise<void> {
    this.events = events;
    try {
      await this.hold.open({ changed: (key, value) => (value === null ? this.removed(key) : this.heard(key, value)), missed: (reason) => this.trust.missed(reason) }, { exceptMark: writeIdsOf(this.backend).mark });
      await this.reload();
      this.trust.start();
    } catch (error) {
      // A failed start must not leave a connection open that keeps the process alive.
      await this.close().catch(() => undefined);
      throw error;
    }
  }

  /** Stops the watch and lets go of the backend; the view forgets what it saw (but what it remembers for rebuilds). */
  async close(): Promise<void> {
    // Our own shutdown disconnects: that is not an outage to report.
    this.events = {};
    this.trust.stop();
    await this.hold.close();
    this.view.clear();
  }

  /** Connected, and nothing since the last successful resync suggests this node missed changes. */
  isTrusted(): boolean {
    return this.reachable() && this.trust.trusted();
  }

  /** Connected, and the feed has not said it is down. */
  reachable(): boolean {
    return this.trust.online() && this.backend.isConnected();
  }

  /**
   * What the view knows of `key`, only if it may answer for the store: the view is trusted and the store confirmed
   * this value within `maxAgeMs`. `undefined`: read the store.
   */
  fresh(key: string, maxAgeMs: number): ObservedRecord<T> | undefined {
    const known = this.view.peek(key);
    return known && this.isTrusted() && known.ageMs <= maxAgeMs ? known : undefined;
  }

  /** How many calls this node made on the map so far. */
  operationCount(): number {
    return this.operations;
  }

  /** The map, while open; a `StoreUnavailableError` otherwise (fail closed). */
  map(): RecordMap {
    return this.hold.map();
  }

  /**
   * Reads one record into the view, unless a removal heard while the read was out may have come after the value it
   * answers (the caller gets what the store said; the view keeps the absence). Throws the codec's error for an
   * unreadable value (recorded in the view as unreadable).
   */
  async read(key: string, options: RecordCallOptions = {}): Promise<ReadRecord<T>> {
    const map = this.map();
    const mark = this.view.removalMark();
    const record = await this.call(() => map.get(key, this.timeout(options)));
    if (!record) {
      this.view.observe(key, null);
      return { raw: null, entry: undefined };
    }
    let entry: T;
    try {
      entry = this.options.codec.decode(key, record.value);
    } catch (error) {
      this.view.observeRead(key, record.value, mark);
      throw error;
    }
    this.view.observeRead(key, record.value, mark, entry);
    return { raw: record.value, entry };
  }

  /** Every record, taken into the view unless a removal of it was heard while the listing was out. */
  async list(options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    const map = this.map();
    const mark = this.view.removalMark();
    const records = await this.call(() => map.list(this.timeout(options)));
    for (const { key, value } of records) this.view.observeRead(key, value, mark);
    return records;
  }

  /** The exact stored value under `key`, readable or not, without touching the view. */
  async readRaw(key: string, options: RecordCallOptions = {}): Promise<string | null> {
    const map = this.map();
    return (await this.call(() => map.get(key, this.timeout(options))))?.value ?? null;
  }

  /**
   * Writes `next` (encoded as `raw`) only if the stored text is still `expected` (`null`: creates). The write is
   * tracked until its answer comes, even past its deadline: the store may still apply a write it could not answer
   * in time, and its late answer records it then (no event will: a node's own values are left out of its feed). An
   * absence seen while it was in flight keeps its answer from putting the value back: the record is read again.
   *
   * A write whose connection failed under it has an unknown outcome: `raw` carries a unique write id, so if the
   * stored value is exactly `raw` the write landed. Events may have been missed in the drop (with an injected client
   * that tells no disconnect), so the view is re-read whatever the settle finds.
   */
  async write(key: string, expected: string | null, next: T, raw: string, options: RecordCallOptions & Pick<RecordWriteOptions, 'notBefore'> = {}): Promise<boolean> {
    const map = this.map();
    const started = Date.now();
    const own = this.view.beginWrite(key, raw, next);
    const write: RecordWriteOptions = {
      timeoutMs: options.timeoutMs ?? this.options.callTimeoutMs,
      ...(options.notBefore !== undefined && { notBefore: options.notBefore }),
      lateOutcome: (landed: boolean | undefined) => {
        this.view.endWrite(key, own);
        try {
          if (landed && this.trust.isActive() && this.hold.map() === map) this.landed(key, own);
        } catch {
          // A view listener's failure is its own; the write is recorded.
        }
      },
    };
    let written: boolean;
    try {
      written = await this.call(() => (expected === null ? map.create(key, raw, write) : map.replace({ key, value: expected }, raw, write)), { settle: true });
    } catch (error) {
      // A timed-out write stays tracked until its late outcome; the others until they are settled here.
      if (error instanceof StoreTimeoutError) throw error;
      if (!isUnknownOutcome(error)) {
        // Not an unknown outcome (the one rule: `isUnknownOutcome`): a member refused it, or it never went out.
        this.view.endWrite(key, own);
        throw error;
      }
      try {
        const left = options.timeoutMs === undefined ? undefined : Math.max(1, options.timeoutMs - (Date.now() - started));
        const stored = await this.call(() => map.get(key, this.timeout({ timeoutMs: left })));
        written = stored?.value === raw;
        if (written) this.landed(key, own);
      } finally {
        this.view.endWrite(key, own);
        this.distrust();
      }
      return written;
    }
    this.view.endWrite(key, own);
    if (written) this.landed(key, own);
    return written;
  }

  /** Events may have been missed or data lost: stop trusting the view until a resync. */
  distrust(): void {
    void this.trust.distrust();
  }

  /** A write of this node's landed: into the view, or, after an absence seen meanwhile, read again. */
  private landed(key: string, own: Parameters<RecordView<T>['landed']>[1]): void {
    if (!this.view.landed(key, own)) void this.read(key).catch(() => this.distrust());
  }

  /** The feed says `key` was removed (or evicted, or expired). */
  private removed(key: string): void {
    try {
      this.events.removed?.(this.hold.map(), key);
    } catch {
      // Not open any more: nothing to tell.
    }
    if (this.view.removed(key, (raw) => this.ownValue(raw)) === 'read-again') void this.read(key).catch(() => undefined);
  }

  /** Whether a stored value was written by this node (its `"writeId"` carries this backend instance's mark). */
  private ownValue(raw: string): boolean {
    const writeId = WRITE_ID.exec(raw)?.[1];
    return writeId !== undefined && writeIdsOf(this.backend).wrote(writeId);
  }

  /** A value another node (or version, or operator) wrote, from the feed. */
  private heard(key: string, value: string): void {
    const unreadable = this.view.heard(key, value);
    if (unreadable) this.events.corruptValue?.(key, unreadable);
  }

  /**
   * One resync: after a disconnect, a lost member or a failed call, changes missed meanwhile are not replayed, so every
   * record is read again. Records this node knew that are now gone were lost (`events.lost`).
   */
  private async resyncOnce(): Promise<void> {
    const before = new Set(this.view.entries().map((e) => e.name));
    const keys = await this.reload();
    const lost = [...before].filter((key) => !keys.has(key));
    if (lost.length > 0) await this.events.lost?.(lost);
  }

  /**
   * Re-reads every record into the view; returns the keys present. A record the view held that the store no longer
   * has went without this node hearing it (events can be lost, a map can be cleared): `events.gone` is told before
   * the view takes the absence in.
   */
  private async reload(): Promise<Set<string>> {
    const map = this.hold.map();
    const mark = this.view.changeMark();
    const records = await this.call(() => map.list());
    const gone = this.view.goneFrom(records, mark);
    if (gone.length > 0) await this.events.gone?.(map, gone);
    for (const { key, reason } of this.view.observeListing(records, mark).unreadable) this.events.corruptValue?.(key, reason);
    return new Set(records.map(({ key }) => key));
  }

  private timeout(options: RecordCallOptions): RecordCallOptions {
    return options.timeoutMs === undefined && this.options.callTimeoutMs !== undefined ? { timeoutMs: this.options.callTimeoutMs } : options;
  }

  /**
   * Runs one call on the map, counted. A call that works after one that failed is the sign that the connection is
   * back (a backend on an injected client tells no reconnect), and the view is re-read.
   */
  call<R>(operation: () => Promise<R>, { settle = false } = {}): Promise<R> {
    this.operations++;
    // Not async: every store call passes here, and a layer of promise and awaits per call shows in a tick's CPU.
    let pending: Promise<R>;
    try {
      pending = operation();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      (result) => {
        void this.trust.callWorked();
        return result;
      },
      (error: unknown) => {
        // A timeout means a stalled store: what it will do with the call, and what events it held back, is unknown,
        // so the view is re-read before the next local answer. Other write failures are settled first.
        if (!settle || error instanceof StoreTimeoutError) this.trust.callFailed();
        throw error;
      },
    );
  }
}

/** The writeId a value carries, when it is its top-level `"writeId"` field written as this library writes it. */
const WRITE_ID = /"writeId":"([^"]*)"/;
