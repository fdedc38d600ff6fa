import { compareCodePoints } from '../core/code-point-order';
import { RecordView, type ChangeMark, type RecordCodec } from '../store/record-view';
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
   * How often the view reads the store's change marker, in ms; it lists the schedules again only when the marker
   * moved. This bounds how stale the view is when events are lost. Default 1000; `0`: no timer (the owner calls
   * {@link ScheduleView.poll}, e.g. on its tick).
   */
  readonly pollIntervalMs?: number;
  /**
   * The view lists everything again at least this often, in ms, marker or not: the bound for a change whose writer
   * died (or lost the cluster) between its write and the marker's touch while events were lost too. Default 60 s.
   */
  readonly resyncIntervalMs?: number;
  /** Deadline of each store call, in ms. Default 5 s. */
  readonly callTimeoutMs?: number;
  /** Told of a background poll that failed (and of a change listener that threw, without `onListenerError`). */
  readonly onError?: (error: unknown) => void;
  /** Told of a change listener that threw. */
  readonly onListenerError?: (error: unknown) => void;
  /** Told of each background poll that succeeded (to say once that the store answers again after failures). */
  readonly onPolled?: () => void;
  /**
   * Given the records this node held that a listing no longer finds (live schedules and tombstones), before the view
   * drops them: it may write back those the store lost (see `restoreSchedules`). The view then lists again, so a
   * record written back is never dropped here. Without it, a record gone from the store is gone from the view.
   */
  readonly restore?: (vanished: ScheduleRecord[]) => Promise<void>;
  /** This process's monotonic clock, in ms (tests pass a fake one). Default `performance.now()`. */
  readonly monotonicNow?: () => number;
}

/** How the view reads schedules' records. */
const SCHEDULE_CODEC: RecordCodec<ScheduleRecord> = {
  decode: (id, raw) => decodeScheduleRecord(id, raw),
  revision: (record) => record.revision,
  // A removed schedule is a tombstone whose revision goes on growing if the id comes back.
  revisionsOutliveRecords: true,
};

/**
 * A node's view of the runtime schedules: the record view every capability keeps (`RecordView`), on the schedules'
 * records, fed by the store's change events and, since those can be lost without any sign, by polling the store's
 * change marker (one read per interval) and listing again when it moved, when the store says events may have been
 * missed, and at least every `resyncIntervalMs`. Revisions only grow, so a late event or a listing older than what an
 * event brought never takes the view back, and a listing begun before an event never undoes it. Listeners hear each
 * change once: added, changed (a new revision), removed.
 */
export class ScheduleView {
  private readonly records = new RecordView<ScheduleRecord>(SCHEDULE_CODEC);
  /** The live schedules as listeners were last told. */
  private readonly live = new Map<string, LiveScheduleRecord>();
  private readonly listeners = new Set<(change: ScheduleChange) => void>();
  private marker: string | null | undefined;
  private confirmedAt = -Infinity;
  private listedAt = -Infinity;
  /** Set when the store said events may have been missed: the next poll lists. */
  private missed = false;
  private polling?: Promise<boolean>;
  private timer?: NodeJS.Timeout;
  private unwatch?: () => void;
  private readonly pollIntervalMs: number;
  private readonly resyncIntervalMs: number;
  private readonly callTimeoutMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: ScheduleStore,
    private readonly options: ScheduleViewOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.resyncIntervalMs = options.resyncIntervalMs ?? 60_000;
    this.callTimeoutMs = options.callTimeoutMs ?? 5_000;
    this.now = options.monotonicNow ?? (() => performance.now());
    this.records.subscribe((id, record) => this.told(id, record));
  }

  /** Starts listening and reads every schedule (throws if that first read fails); then polls on its timer. */
  async start(): Promise<void> {
    // Listen before reading, so a change made during the first listing is heard.
    this.unwatch = this.store.watch({
      changed: (id, record) => this.heard(id, record),
      missed: () => {
        this.missed = true;
      },
    });
    try {
      await this.poll();
    } catch (error) {
      this.close();
      throw error;
    }
    if (this.pollIntervalMs > 0) {
      this.timer = setInterval(() => this.poll().then(() => this.options.onPolled?.(), (error: unknown) => this.options.onError?.(error)), this.pollIntervalMs);
      this.timer.unref();
    }
  }

  /** Stops the timer and the events; listeners hear nothing more. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
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

  /**
   * How long ago (ms, monotonic) the store last confirmed this view: a marker read that found it unmoved, or a
   * listing. Infinity before the first. Events since then may still have been lost, but no change older than this
   * is missing, unless its writer failed between the write and the marker's touch (then `resyncIntervalMs` bounds it).
   */
  ageMs(): number {
    return this.now() - this.confirmedAt;
  }

  /** Calls `listener` on every change; returns the unsubscribe. A listener that throws is reported, not fatal. */
  onChange(listener: (change: ScheduleChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reads the change marker and lists again if it moved (or events were missed, or the last listing is older than
   * `resyncIntervalMs`). Returns whether it listed. Concurrent calls share one poll.
   */
  poll(): Promise<boolean> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<boolean> {
    const started = this.now();
    const due = this.missed || this.marker === undefined || started - this.listedAt >= this.resyncIntervalMs;
    // The marker is read before the listing: a write that lands after the listing touches it after this read.
    const marker = await this.store.readMarker({ timeoutMs: this.callTimeoutMs });
    if (!due && marker === this.marker) {
      this.confirmedAt = started;
      return false;
    }
    this.missed = false;
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
    this.marker = marker;
    this.listedAt = started;
    this.confirmedAt = started;
    return true;
  }

  /** Every record (tombstones too), as the view observes a listing. */
  private async list(): Promise<Array<{ key: string; value: string }>> {
    try {
      const listed = await this.store.list({ removed: true, timeoutMs: this.callTimeoutMs });
      return listed.filter((v) => v.raw !== null).map(({ raw, record }) => ({ key: record!.id, value: raw! }));
    } catch (error) {
      this.missed = true; // list again at the next poll, whatever the marker says then
      throw error;
    }
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
