import { compareCodePoints } from '../core/code-point-order';
import type { MissedReason } from '../store/record-map';
import { RecordView, type ChangeMark, type RecordCodec } from '../store/record-view';
import { ViewTrust } from '../store/view-trust';
import { isLive, type LiveScheduleRecord, type ScheduleRecord } from './schedule-record';
import { decodeScheduleRecord, encodeScheduleRecord } from './schedule-record.codec';
import type { ScheduleStore } from './schedule-store';

/** A change of a node's view of the runtime schedules. */
export type ScheduleChange =
  | { readonly kind: 'added'; readonly schedule: LiveScheduleRecord }
  | { readonly kind: 'changed'; readonly schedule: LiveScheduleRecord; readonly previous: LiveScheduleRecord }
  | { readonly kind: 'removed'; readonly previous: LiveScheduleRecord };

/** How a view keeps fresh. */
export interface ScheduleViewOptions {
  /**
   * How often the view lists again whatever the feed says, in ms (its staleness bound where the feed can lose events
   * without telling). Default: the store's `resyncEveryMs`; none where the feed tells every loss.
   */
  readonly resyncEveryMs?: number;
  /** Deadline of each store call, in ms. Default 5 s. */
  readonly callTimeoutMs?: number;
  /** Told of a re-read that failed (and of a change listener that threw, without `onListenerError`). */
  readonly onError?: (error: unknown) => void;
  /** Told of a change listener that threw. */
  readonly onListenerError?: (error: unknown) => void;
  /** Told when a re-read after missed changes ran to its end (to say once that the store answers again after failures). */
  readonly onResynced?: () => void;
  /**
   * Given the records this node held that a listing no longer finds (live schedules and tombstones), before the view
   * drops them: it may write back those the store lost (see `restoreSchedules`). The view then lists again, so a
   * record written back is never dropped here. Without it, a record gone from the store is gone from the view.
   */
  readonly restore?: (vanished: ScheduleRecord[]) => Promise<void>;
}

/** How the view reads schedules' records. */
const SCHEDULE_CODEC: RecordCodec<ScheduleRecord> = {
  decode: (id, raw) => decodeScheduleRecord(id, raw),
  revision: (record) => record.revision,
  // A removed schedule is a tombstone whose revision goes on growing if the id comes back.
  revisionsOutliveRecords: true,
};

/** The first wait before a failed re-read is tried again, and the longest, in ms (the view's staleness policy). */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 5_000;

/**
 * A node's view of the runtime schedules: the record view every capability keeps (`RecordView`) on the schedules'
 * records, trusted by the one rule every view follows (`ViewTrust`): fed by the map's change feed, and listed again
 * whenever the feed says changes may have been missed (a disconnect and reconnect, a member lost, a cleared map, lost
 * data). Its staleness bound is the feed's: the time the backend takes to notice it may have lost events (see the
 * Guarantees page); where the feed tells every loss (every backend of this library) there is no timer of its own, and
 * where it may lose events without telling the store declares how often to list anyway (`resyncEveryMs`). A re-read
 * that fails is tried again after 1 s,
 * doubling to 5 s, until one works (or the feed says it is down: its reconnect re-reads). Revisions only grow, so a
 * late event or a listing older than what an event brought never takes the view back, and a listing begun before an
 * event never undoes it. Listeners hear each change once: added, changed (a new revision), removed.
 */
export class ScheduleView {
  private readonly records = new RecordView<ScheduleRecord>(SCHEDULE_CODEC);
  /** The live schedules as listeners were last told. */
  private readonly live = new Map<string, LiveScheduleRecord>();
  private readonly listeners = new Set<(change: ScheduleChange) => void>();
  private readonly trust: ViewTrust;
  /** The listings, one after the other: each starts after the one before it ended. */
  private listing: Promise<void> = Promise.resolve();
  private retry?: NodeJS.Timeout;
  private resyncTimer?: NodeJS.Timeout;
  private retryMs = RETRY_FIRST_MS;
  private unwatch?: () => void;
  private readonly callTimeoutMs: number;

  constructor(
    private readonly store: ScheduleStore,
    private readonly options: ScheduleViewOptions = {},
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? 5_000;
    this.records.subscribe((id, record) => this.told(id, record));
    this.trust = new ViewTrust(() => this.reread(), { disconnected: () => undefined, resynced: () => options.onResynced?.() });
  }

  /** Starts listening and reads every schedule (throws if that first read fails). */
  async start(): Promise<void> {
    // Listen before reading, so a change made during the first listing is heard; trusted from the first listing on.
    this.unwatch = this.store.watch({ changed: (id, record) => this.heard(id, record), missed: (reason) => this.missed(reason) });
    this.trust.start();
    try {
      await this.refresh();
    } catch (error) {
      this.close();
      throw error;
    }
    const every = this.options.resyncEveryMs ?? this.store.resyncEveryMs;
    if (every !== undefined && every > 0) {
      this.resyncTimer = setInterval(() => void this.trust.distrust(), every);
      this.resyncTimer.unref();
    }
  }

  /** Stops the events and any retry; listeners hear nothing more. */
  close(): void {
    this.trust.stop();
    clearTimeout(this.retry);
    this.retry = undefined;
    clearInterval(this.resyncTimer);
    this.resyncTimer = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
    this.listeners.clear();
  }

  /** Every live schedule this node knows of, sorted by id. */
  schedules(): LiveScheduleRecord[] {
    return [...this.live.values()].sort((a, b) => compareCodePoints(a.id, b.id));
  }

  /** The live schedule of this id as this node knows it, or `undefined`. */
  get(id: string): LiveScheduleRecord | undefined {
    return this.live.get(id);
  }

  /** Whether the view may answer for the store: nothing since its last listing suggests it missed changes. */
  isTrusted(): boolean {
    return this.trust.online() && this.trust.trusted();
  }

  /** Calls `listener` on every change; returns the unsubscribe. A listener that throws is reported, not fatal. */
  onChange(listener: (change: ScheduleChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Lists every schedule again now, after any listing under way (an edit this node made shows at once). */
  refresh(): Promise<void> {
    const next = this.listing.catch(() => undefined).then(() => this.listOnce());
    this.listing = next;
    return next;
  }

  /** The feed says changes may have been missed: the one rule of every view (`ViewTrust`) decides when to re-read. */
  private missed(reason: MissedReason): void {
    this.trust.missed(reason);
  }

  /** A re-read for the view's trust; one that fails is tried again (see the class), unless the feed is down. */
  private async reread(): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    try {
      await this.refresh();
      this.retryMs = RETRY_FIRST_MS;
    } catch (error) {
      this.options.onError?.(error);
      if (this.trust.online()) {
        this.retry = setTimeout(() => void this.trust.distrust(), this.retryMs);
        this.retry.unref();
        this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
      }
      throw error;
    }
  }

  private async listOnce(): Promise<void> {
    let mark = this.records.changeMark();
    let listed = await this.list();
    const vanished = this.options.restore ? this.vanished(listed, mark) : [];
    if (vanished.length > 0) {
      // Held here, gone from the store: written back if the store lost them, then listed again to see what stands.
      await this.options.restore!(vanished);
      mark = this.records.changeMark();
      listed = await this.list();
    }
    // Gone from the store (deleted by hand, or lost) unless an event changed it after the listing began.
    this.records.observeListing(listed, mark);
  }

  /** Every record (tombstones too), as the view observes a listing. */
  private async list(): Promise<Array<{ key: string; value: string }>> {
    const listed = await this.store.list({ removed: true, timeoutMs: this.callTimeoutMs });
    return listed.filter((v) => v.raw !== null).map(({ raw, record }) => ({ key: record!.id, value: raw! }));
  }

  /** The records this node holds that `listed` lacks and no event changed since `mark`. */
  private vanished(listed: ReadonlyArray<{ key: string }>, mark: ChangeMark): ScheduleRecord[] {
    return this.records.goneFrom(listed, mark).flatMap((id) => {
      const held = this.records.remembered(id);
      return held ? [held] : [];
    });
  }

  /** A change the store sent: a record as written (a tombstone too), or its disappearance. */
  private heard(id: string, record: ScheduleRecord | undefined): void {
    if (record) this.records.heard(id, encodeScheduleRecord(record), record);
    else this.records.removed(id);
  }

  /** The view took in a newer record of `id` (or its absence): listeners hear what it changed. */
  private told(id: string, record: ScheduleRecord | undefined): void {
    const previous = this.live.get(id);
    if (isLive(record)) {
      this.live.set(id, record);
      if (previous?.revision === record.revision) return; // the same revision in other words: nothing changed
      this.emit(previous ? { kind: 'changed', schedule: record, previous } : { kind: 'added', schedule: record });
    } else if (previous) {
      this.live.delete(id);
      this.emit({ kind: 'removed', previous });
    }
  }

  private emit(change: ScheduleChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        (this.options.onListenerError ?? this.options.onError)?.(error);
      }
    }
  }
}
