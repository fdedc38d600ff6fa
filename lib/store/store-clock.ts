import type { Clock } from '../core/clock';
import { withDeadline } from '../core/with-deadline';
import type { StoreBackend } from './store-backend';

/** Options of a {@link StoreClock}. */
export interface StoreClockOptions {
  /** Read the store's clock again this often, in ms (a reading is one round trip). Default 15 s. */
  resampleMs?: number;
  /** Give a reading up after this many ms. Default 5 s. */
  readTimeoutMs?: number;
  /** This process's monotonic clock, in ms. Default `performance.now()`. */
  monotonic?: () => number;
  /** This process's wall clock, in epoch ms. Default `Date.now()`. */
  wall?: () => number;
}

/** How fast two clocks may drift apart, as a fraction (100 ppm): an NTP-disciplined clock stays far inside it. */
const DRIFT_RATE = 1e-4;
/** Readings a start makes before it gives up. */
const START_ATTEMPTS = 3;

interface Reading {
  /** What the store's clock read, at some moment between the request and the answer: never ahead of it at the answer. */
  readonly at: number;
  /** At most what the store's clock read when the answer came: the reading plus its whole round trip (and 1 ms of rounding). */
  readonly upper: number;
  /** The round trip, plus 1 ms for the store's rounding: how far {@link Reading.upper} may be ahead. */
  readonly aheadMs: number;
  /** When the answer came, on the monotonic clock and on the wall clock. */
  readonly monotonicAt: number;
  readonly wallAt: number;
}

/**
 * The store's clock as this node counts it, never behind it: the last reading of the store's clock (PostgreSQL
 * `clock_timestamp()`, Redis `TIME`) plus its round trip, carried forward by whichever of this process's monotonic and
 * wall clocks moved more since (the monotonic clock misses a suspended host; the wall clock misses nothing that moves
 * it forward, and a wall clock stepped back changes nothing), and the drift they may have.
 *
 * Where a store has a clock, permits are timed by it: a holder's lease vouches while this count is before its expiry,
 * so as this count never falls behind the store's clock, the lease never outlives the permit on the store's clock,
 * whatever the node's wall clock, an NTP step or the `clock` option say. Whoever takes a permit as lapsed has the store
 * confirm it on its own clock in the same write (`RecordWriteOptions.notBefore`), so a count that runs ahead only ever
 * delays a takeover. What this rests on: the store's clock never steps forward.
 *
 * Until the first reading (before the store is connected) it answers `fallback`'s time; nothing is decided then.
 */
export class StoreClock implements Clock {
  private reading?: Reading;
  private read?: () => Promise<number>;
  private timer?: NodeJS.Timeout;
  private sampling?: Promise<void>;
  private readonly monotonic: () => number;
  private readonly wall: () => number;
  private readonly resampleMs: number;
  private readonly readTimeoutMs: number;

  constructor(
    /** The time answered until the store's clock is read: always, on a store without a clock. */
    private readonly fallback: Clock,
    options: StoreClockOptions = {},
  ) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.wall = options.wall ?? (() => Date.now());
    this.resampleMs = options.resampleMs ?? 15_000;
    this.readTimeoutMs = options.readTimeoutMs ?? 5_000;
  }

  /** The store's time now as this node counts it (whole epoch ms): never behind the store's clock. */
  now(): number {
    return this.reading ? Math.ceil(this.countedAt(this.reading)) : this.fallback.now();
  }

  /**
   * The earliest the store's time can be now (whole epoch ms): the last reading carried by the monotonic clock alone,
   * less its drift, so never ahead of the store's clock (a wall clock that jumped forward does not move it). What a
   * node decides another's lease has lapsed by, where the store does not confirm it in the write (task claims).
   */
  earliest(): number {
    const reading = this.reading;
    if (!reading) return this.fallback.now();
    return Math.floor(reading.at + Math.max(0, this.monotonic() - reading.monotonicAt) * (1 - DRIFT_RATE));
  }

  /** How far {@link StoreClock.now} may be ahead of the store's clock, in ms; `undefined` before the first reading. */
  aheadMs(): number | undefined {
    const reading = this.reading;
    return reading && reading.aheadMs + DRIFT_RATE * (this.monotonic() - reading.monotonicAt);
  }

  /**
   * Follows the store whose clock `read` reads (once, when the store is known to have one). Until it is attached and
   * read, this clock is `fallback`.
   */
  attach(read: () => Promise<number>): void {
    if (this.read) throw new Error('StoreClock: already attached to a store');
    this.read = read;
  }

  /** Whether a store's clock is attached (see {@link StoreClock.attach}): the store has a clock. */
  isAttached(): boolean {
    return this.read !== undefined;
  }

  /**
   * A reading of the store's clock that another call brought back (see `StoreBackend.onClockReading`): the store read
   * `storeMs` at some moment after `sentAt` (this clock's monotonic time, `performance.now()` unless it was given
   * another). Taken as one of its own, with the time since `sentAt` as its round trip, and its own next reading is put
   * off by `resampleMs`: where the backend's calls bring readings often enough, it never reads the clock itself.
   */
  offer(storeMs: number, sentAt: number): void {
    if (!this.read) return;
    this.take(storeMs, sentAt);
    if (this.timer) this.schedule();
  }

  /** Reads the store's clock now (one reading at a time: a caller during one waits for it). */
  sync(): Promise<void> {
    this.sampling ??= this.sample().finally(() => {
      this.sampling = undefined;
    });
    return this.sampling;
  }

  /**
   * Reads the store's clock now (a few tries) and then every `resampleMs`; a failed later reading keeps the count
   * going from the last one. Nothing to do on a store without a clock.
   */
  async start(): Promise<void> {
    if (!this.read) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.sync();
        break;
      } catch (error) {
        if (attempt >= START_ATTEMPTS) throw error;
      }
    }
    this.schedule();
  }

  /** Stops reading the store's clock; the count goes on from the last reading. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private countedAt(reading: Reading): number {
    const elapsed = Math.max(this.monotonic() - reading.monotonicAt, this.wall() - reading.wallAt, 0);
    return reading.upper + elapsed * (1 + DRIFT_RATE);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.sync().catch(() => undefined).finally(() => {
        if (this.timer) this.schedule();
      });
    }, this.resampleMs);
    this.timer.unref();
  }

  private async sample(): Promise<void> {
    const read = this.read;
    if (!read) return;
    const sent = this.monotonic();
    this.take(await withDeadline(read(), this.readTimeoutMs, "read the store's clock"), sent);
  }

  /** Takes in that the store's clock read `at` at some moment after `sent` (monotonic): its round trip is the time since. */
  private take(at: number, sent: number): void {
    const monotonicAt = this.monotonic();
    const aheadMs = monotonicAt - sent + 1;
    const next: Reading = { at, upper: at + aheadMs, aheadMs, monotonicAt, wallAt: this.wall() };
    // Both are counts never behind the store's clock: the lower one is the closer (a slow reading, or a count the wall
    // clock pushed ahead, gives way to the better one). Unless the store read past the count it has: its clock stepped
    // forward, and only the new reading is still never behind it.
    const counted = this.reading && this.countedAt(this.reading);
    if (counted === undefined || next.upper <= counted || at > counted) this.reading = next;
  }
}

/**
 * Has `clock` follow `backend`'s own clock, when it has one (PostgreSQL, Redis): its readings, and those the backend's
 * calls bring back (see {@link StoreClock.offer}). Nothing on a store without a clock.
 */
export function followStoreClock(clock: StoreClock, backend: Pick<StoreBackend, 'now' | 'onClockReading'>): void {
  const read = backend.now?.bind(backend);
  if (!read) return;
  clock.attach(read);
  backend.onClockReading?.((storeMs, sentAt) => clock.offer(storeMs, sentAt));
}

/**
 * The earliest the time can be now on `clock`: {@link StoreClock.earliest} for a count of a store's clock, else the
 * clock's own time. Decide that another's lease lapsed by it; measure one's own by `now()`.
 */
export function earliestOf(clock: Clock): number {
  return clock instanceof StoreClock ? clock.earliest() : clock.now();
}
