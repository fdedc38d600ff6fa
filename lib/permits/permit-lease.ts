import type { Clock } from '../core/clock';
import { TRANSIENT_DENIALS } from './deny-reason';
import type { Permit } from './permit';
import type { AcquireResult } from './acquire-result';
import { renewDelayMs } from '../core/lease.rules';
import { permitLost } from './errors/semaphore.errors';

/** Options of a {@link PermitLease}. */
export interface PermitLeaseOptions {
  /** Refresh the permit in the background while the work runs. Default true. */
  keepAlive?: boolean;
  /** The clock-skew bound: the lease vouches until `expiresAt` minus this. Default 0. */
  clockSkewMs?: number;
  /** Stop keeping the permit alive this long after the start, and fire the signal (ShedLock's `lockAtMostFor`). */
  maxRunTimeMs?: number;
}

/** The most a Node timer can wait (about 24.8 days); longer waits are re-armed in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A permit in use by running work: keeps it alive by refreshing it at a third of its duration, and fires
 * `signal` when it is lost: a refresh denied, expiry reached without a successful refresh, `maxRunTime` reached,
 * or news that it no longer holds (revoked by an operator, excluded by an edit, its data lost), which arrives by
 * `watch` before anything withdraws it. Work should check {@link PermitLease.assertValid} or `signal.aborted` before each
 * side effect.
 *
 * The lease vouches for the permit only until `expiresAt - clockSkewMs` by this node's clock: other nodes wait
 * until `expiresAt + clockSkewMs` by theirs, so with clocks within the bound the two never overlap.
 */
export class PermitLease {
  private readonly controller = new AbortController();
  private refreshTimer?: NodeJS.Timeout;
  /** Fires the signal at `validUntil`, whatever a refresh in flight is doing (it may hang). */
  private expiryTimer?: NodeJS.Timeout;
  private maxRunTimer?: NodeJS.Timeout;
  private current: Permit;
  private readonly skewMs: number;
  private readonly stopAt: number | undefined;
  private ended = false;
  private readonly unwatch: () => void;

  /** @internal The library makes leases; applications receive them. */
  constructor(
    permit: Permit,
    private readonly refresh: (permit: Permit) => Promise<AcquireResult>,
    watch: (permit: Permit, onLost: (reason: string) => void) => () => void,
    private readonly clock: Clock,
    private readonly options: PermitLeaseOptions = {},
  ) {
    this.current = permit;
    this.skewMs = options.clockSkewMs ?? 0;
    this.stopAt = options.maxRunTimeMs === undefined ? undefined : clock.now() + options.maxRunTimeMs;
    this.unwatch = watch(permit, (reason) => this.lose(reason));
    this.armExpiry();
    this.armMaxRunTime();
    this.scheduleRefresh();
  }

  /** Until when (this node's clock) the lease vouches for the permit. */
  get validUntil(): number {
    return this.current.expiresAt - this.skewMs;
  }

  /** Whether the signal fired because `maxRunTime` was reached (not because the permit was lost). */
  get reachedMaxRunTime(): boolean {
    return this.maxRunTimeReached;
  }
  private maxRunTimeReached = false;

  /** The permit as last granted or refreshed. */
  get permit(): Permit {
    return this.current;
  }

  /** Fires when the permit is lost; `signal.reason` is a {@link LeaseLostError}. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the permit is still held as far as this node can tell (not lost, not past its expiry). */
  isValid(): boolean {
    return !this.controller.signal.aborted && this.clock.now() < this.validUntil;
  }

  /** Throws {@link LeaseLostError} unless {@link PermitLease.isValid}. Call it right before a side effect. */
  assertValid(): void {
    if (this.clock.now() >= this.validUntil) this.lose('expired without a successful refresh');
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** Stops keeping the permit alive; with a reason, also fires the signal. */
  end(reason?: string): void {
    this.ended = true;
    this.stopTimers();
    this.unwatch();
    if (reason) this.lose(reason);
  }

  /** Next refresh at a third of what is left of the permit, so a live cut of the duration is followed. */
  private scheduleRefresh(): void {
    if (this.options.keepAlive === false || this.ended || this.controller.signal.aborted) return;
    const now = this.clock.now();
    if (this.stopAt !== undefined && now >= this.stopAt) return;
    const left = this.validUntil - now;
    const durationMs = Math.max(1, this.current.expiresAt - this.current.refreshedAt - this.skewMs);
    const delay = renewDelayMs(durationMs, left, MAX_TIMER_MS);
    this.refreshTimer = setTimeout(() => void this.tick(), delay);
    this.refreshTimer.unref();
  }

  private armExpiry(): void {
    clearTimeout(this.expiryTimer);
    const left = this.validUntil - this.clock.now();
    if (left <= 0) return this.lose('expired without a successful refresh');
    this.expiryTimer = setTimeout(() => {
      if (this.clock.now() >= this.validUntil) this.lose('expired without a successful refresh');
      else this.armExpiry();
    }, Math.min(left, MAX_TIMER_MS));
    this.expiryTimer.unref();
  }

  private armMaxRunTime(): void {
    if (this.stopAt === undefined) return;
    const left = this.stopAt - this.clock.now();
    if (left <= 0) {
      this.maxRunTimeReached = true;
      return this.lose(`maxRunTime of ${this.options.maxRunTimeMs} ms reached; the permit is no longer kept alive`);
    }
    this.maxRunTimer = setTimeout(() => this.armMaxRunTime(), Math.min(left, MAX_TIMER_MS));
    this.maxRunTimer.unref();
  }

  private async tick(): Promise<void> {
    if (this.ended || this.controller.signal.aborted) return;
    let result: AcquireResult;
    try {
      result = await this.refresh(this.current);
    } catch (error) {
      // A store that throws instead of denying: treat as transient, the expiry timer still guards.
      result = { granted: false, semaphore: this.current.semaphore, reason: 'STORE_UNAVAILABLE', message: String(error) };
    }
    if (this.ended || this.controller.signal.aborted) return;
    if (result.granted) {
      this.current = result.permit;
      this.armExpiry();
    } else if (!TRANSIENT_DENIALS.has(result.reason)) {
      return this.lose(`${result.reason}: ${result.message}`);
    }
    this.scheduleRefresh();
  }

  private lose(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(permitLost(this.current.semaphore, reason));
    this.stopTimers();
  }

  private stopTimers(): void {
    clearTimeout(this.refreshTimer);
    clearTimeout(this.expiryTimer);
    clearTimeout(this.maxRunTimer);
  }
}
