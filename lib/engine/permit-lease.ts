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
 */
export class PermitLease {
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private current: Permit;

  constructor(
    permit: Permit,
    private readonly refresh: (permit: Permit) => Promise<AcquireResult>,
    private readonly clock: Clock,
    keepAlive: boolean,
  ) {
    this.current = permit;
    const durationMs = Math.max(1, permit.expiresAt - permit.refreshedAt);
    if (keepAlive) this.schedule(Math.max(20, Math.floor(durationMs / 3)));
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
    return !this.controller.signal.aborted && this.clock.now() < this.current.expiresAt;
  }

  /** Throws {@link PermitLostError} unless {@link isValid}. Call it right before a side effect. */
  assertValid(): void {
    if (this.clock.now() >= this.current.expiresAt) this.lose('expired without a successful refresh');
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
    if (this.clock.now() >= this.current.expiresAt) return this.end('expired without a successful refresh');
    const result = await this.refresh(this.current);
    if (!this.timer) return; // ended while the refresh was in flight
    if (result.granted) {
      this.current = result.permit;
    } else if (result.reason !== 'STORE_UNAVAILABLE' && result.reason !== 'CONTENTION') {
      return this.end(`${result.reason}: ${result.message}`);
    }
    // On a transient failure keep trying until expiry, then give up.
    this.schedule(Math.max(10, Math.min(intervalMs, this.current.expiresAt - this.clock.now())));
  }

  private lose(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new PermitLostError(this.current.semaphore, reason));
  }
}
