import type { Clock } from '../gatekeeper/clock';
import type { Permit } from '../gatekeeper/permit';
import { GatekeeperError } from '../errors/gatekeeper.error';
import type { AcquireResult } from './acquire-result';

/** Thrown by {@link PermitLease.assertValid} once the permit can no longer be vouched for. */
export class PermitLostError extends GatekeeperError {
  constructor(
    /** The semaphore whose permit was lost. */
    readonly semaphore: string,
    /** Why. */
    readonly reason: string,
  ) {
    super(`Permit of "${semaphore}" is lost: ${reason}`);
  }
}

/**
 * A permit in use by running work: keeps it alive by refreshing it at a third of its duration, and fires
 * `signal` when it is lost (refresh denied, expiry reached without a successful refresh, or {@link end} with a
 * reason). Work should check {@link assertValid} or `signal.aborted` before each side effect.
 *
 * The lease vouches for the permit only until `expiresAt - clockSkewMs` by this node's clock: other nodes wait
 * until `expiresAt + clockSkewMs` by theirs, so with clocks within the bound the two never overlap.
 */
export class PermitLease {
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private current: Permit;
  private readonly skewMs: number;

  constructor(
    permit: Permit,
    private readonly refresh: (permit: Permit) => Promise<AcquireResult>,
    private readonly clock: Clock,
    { keepAlive = true, clockSkewMs = 0 }: { keepAlive?: boolean; clockSkewMs?: number } = {},
  ) {
    this.current = permit;
    this.skewMs = clockSkewMs;
    const durationMs = Math.max(1, permit.expiresAt - permit.refreshedAt - clockSkewMs);
    if (keepAlive) this.schedule(Math.max(20, Math.floor(durationMs / 3)));
  }

  /** Until when (this node's clock) the lease vouches for the permit. */
  get validUntil(): number {
    return this.current.expiresAt - this.skewMs;
  }

  /** The permit as last granted or refreshed. */
  get permit(): Permit {
    return this.current;
  }

  /** Fires when the permit is lost; `signal.reason` is a {@link PermitLostError}. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the permit is still held as far as this node can tell (not lost, not past its expiry). */
  isValid(): boolean {
    return !this.controller.signal.aborted && this.clock.now() < this.validUntil;
  }

  /** Throws {@link PermitLostError} unless {@link isValid}. Call it right before a side effect. */
  assertValid(): void {
    if (this.clock.now() >= this.validUntil) this.lose('expired without a successful refresh');
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** Stops keeping the permit alive; with a reason, also fires the signal. */
  end(reason?: string): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (reason) this.lose(reason);
  }

  private schedule(intervalMs: number): void {
    this.timer = setTimeout(() => void this.tick(intervalMs), intervalMs);
    this.timer.unref();
  }

  private async tick(intervalMs: number): Promise<void> {
    if (this.controller.signal.aborted || !this.timer) return;
    if (this.clock.now() >= this.validUntil) return this.end('expired without a successful refresh');
    const result = await this.refresh(this.current);
    if (!this.timer) return; // ended while the refresh was in flight
    if (result.granted) {
      this.current = result.permit;
    } else if (result.reason !== 'STORE_UNAVAILABLE' && result.reason !== 'CONTENTION') {
      return this.end(`${result.reason}: ${result.message}`);
    }
    // On a transient failure keep trying until expiry, then give up.
    this.schedule(Math.max(10, Math.min(intervalMs, this.validUntil - this.clock.now())));
  }

  private lose(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new PermitLostError(this.current.semaphore, reason));
  }
}
