import type { Clock } from '../core/clock';

/** Options of a {@link StoreClock}. */
export interface StoreClockOptions {
  /** Read the store's clock again this often, in ms (a reading is one round trip). Default 15 s. */
  resampleMs?: number;
  /** This process's monotonic clock, in ms. Default `performance.now()`: no wall-clock step or slew of this node moves it. */
  monotonic?: () => number;
}

/** How fast two clocks may drift apart, as a fraction (100 ppm): an NTP-disciplined clock stays far inside it. */
const DRIFT_RATE = 1e-4;

interface Reading {
  /** The store's time at `monotonicAt`: the reading plus half its round trip. */
  readonly storeAt: number;
  /** When (monotonic) that was. */
  readonly monotonicAt: number;
  /** How far `storeAt` may be off: half the round trip, a millisecond for the store's rounding and one for this node's. */
  readonly errorMs: number;
}

/**
 * The store's clock as this node counts it: the last reading of the store's clock (PostgreSQL `clock_timestamp()`,
 * Redis `TIME`) carried forward on this process's monotonic clock. Where a store has a clock, permits are timed by it
 * and nothing else: every node decides grants and expiry on one clock, and a holder's lease runs on its own monotonic
 * clock from a reading taken before the request that won it, so no node's wall clock, NTP step or `clock` option
 * stretches a lease. The `maxClockSkew` bound then covers only how far a node's count may be off the store's own:
 * half a reading's round trip and the drift since.
 *
 * Never goes back: a reading behind what this node already counted (the store's clock stepped back) leaves the count
 * where it is until the store's clock catches up, so no lease this node measures is ever lengthened by it (the
 * permits it writes meanwhile last longer in the store's eyes, which delays a takeover and never brings one early).
 *
 * Until the first reading (before the store is connected) it answers `fallback`'s time; nothing is decided then.
 */
export class StoreClock implements Clock {
  private reading?: Reading;
  private last = -Infinity;
  private timer?: NodeJS.Timeout;
  private sampling?: Promise<void>;
  private readonly monotonic: () => number;
  private readonly resampleMs: number;

  private read?: () => Promise<number>;
  private onStepBack?: (byMs: number) => void;

  constructor(
    /** The time answered until the store's clock is read: always, on a store without a clock. */
    private readonly fallback: Clock,
    options: StoreClockOptions = {},
  ) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.resampleMs = options.resampleMs ?? 15_000;
  }

  /** The store's time now, as this node counts it (whole epoch ms). Never smaller than an earlier answer. */
  now(): number {
    const reading = this.reading;
    if (!reading) return this.fallback.now();
    this.last = Math.max(this.last, Math.floor(reading.storeAt + (this.monotonic() - reading.monotonicAt)));
    return this.last;
  }

  /** How far {@link StoreClock.now} may be off the store's clock now, in ms; `undefined` before the first reading. */
  errorMs(): number | undefined {
    const reading = this.reading;
    return reading && reading.errorMs + DRIFT_RATE * (this.monotonic() - reading.monotonicAt);
  }

  /**
   * Follows the store whose clock `read` reads (once, when the store is known to have one). Until it is attached and
   * read, this clock is `fallback`. `onStepBack` is told when a reading is behind what this node already counted (the
   * store's clock stepped back), by how much.
   */
  attach(read: () => Promise<number>, onStepBack?: (byMs: number) => void): void {
    if (this.read) throw new Error('StoreClock: already attached to a store');
    this.read = read;
    this.onStepBack = onStepBack;
  }

  /** Whether a store's clock is attached (see {@link StoreClock.attach}): the store has a clock. */
  isAttached(): boolean {
    return this.read !== undefined;
  }

  /** Whether the store's clock has been read. */
  isSynced(): boolean {
    return this.reading !== undefined;
  }

  /** Reads the store's clock now (one at a time: a caller during a reading waits for it). */
  sync(): Promise<void> {
    this.sampling ??= this.sample().finally(() => {
      this.sampling = undefined;
    });
    return this.sampling;
  }

  /**
   * Reads the store's clock now and then every `resampleMs`; a failed reading keeps the last one (drift counted).
   * Nothing to do on a store without a clock.
   */
  async start(): Promise<void> {
    if (!this.read) return;
    await this.sync();
    this.schedule();
  }

  /** Stops reading the store's clock; the count goes on from the last reading. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
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
    if (!this.read) return;
    const sent = this.monotonic();
    const at = await this.read();
    const received = this.monotonic();
    const halfTrip = (received - sent) / 2;
    const next: Reading = { storeAt: at + halfTrip, monotonicAt: received, errorMs: halfTrip + 2 };
    // A slower reading than the one kept (a round trip that took long) is worse than carrying that one forward.
    const kept = this.errorMs();
    if (kept !== undefined && next.errorMs > kept) return;
    const counted = this.reading ? this.now() : undefined;
    this.reading = next;
    if (counted !== undefined && next.storeAt + next.errorMs < counted - (kept ?? 0)) this.onStepBack?.(Math.round(counted - next.storeAt));
  }
}
