import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../core/clock';
import { parseDuration, type DurationInput } from '../core/duration';
import type { AcquireResult } from './acquire-result';
import { validateSemaphoreName } from './definition.validator';
import { PermitNotHeldError } from './errors/permit-not-held.error';
import { WaitTimeoutError } from './errors/wait-timeout.error';
import type { Permit } from './permit';
import type { PermitClaim, PermitDecisions } from './permit-decisions';
import type { DecideOptions } from './permit-engine.options';

/**
 * Permits taken by hand (`GatekeeperService.tryAcquire`, `acquire`, `release`), on this process's decisions: a permit
 * acquired is its caller's alone in this process until released (runs and `withPermit` of the semaphore are denied
 * `IN_USE` meanwhile), and is released only by compare-and-set on its own token.
 */
export class ManualPermits {
  /** Claims taken by {@link acquire}, given back by {@link release}. */
  private readonly claims = new Map<string, PermitClaim>();

  constructor(
    private readonly decisions: PermitDecisions,
    /** The clock `acquire`'s timeout is counted on. */
    private readonly clock: Clock,
  ) {}

  /** Grants or refreshes, or says why not; `IN_USE` while other work in this process uses the permit. */
  async tryAcquire(semaphore: string, options: DecideOptions = {}): Promise<AcquireResult> {
    validateSemaphoreName(semaphore);
    if (this.decisions.phase !== 'ready') return this.decisions.notReady(semaphore);
    if (this.decisions.isClaimed(semaphore)) return this.decisions.inUse(semaphore);
    return this.decisions.decide(semaphore, options);
  }

  /**
   * Tries until granted, every `pollInterval` (default: a tenth of the timeout, between 50 ms and 1 s); throws
   * {@link WaitTimeoutError} after `timeout` (default 30 s). The permit keeps this process's claim until released.
   */
  async acquire(semaphore: string, { timeout = '30s', pollInterval }: { timeout?: DurationInput; pollInterval?: DurationInput } = {}): Promise<Permit> {
    validateSemaphoreName(semaphore);
    const timeoutMs = parseDuration(timeout, semaphore, 'timeout', { allowZero: true });
    const pollMs = pollInterval === undefined
      ? Math.min(1000, Math.max(50, Math.floor(timeoutMs / 10)))
      : parseDuration(pollInterval, semaphore, 'pollInterval');
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      const key = this.decisions.claim(semaphore, 'acquire()');
      const result = key ? await this.decisions.decide(semaphore, {}) : this.decisions.inUse(semaphore);
      if (result.granted) {
        this.claims.set(claimKey(result.permit), key!);
        return result.permit;
      }
      if (key) this.decisions.unclaim(semaphore, key);
      const left = deadline - this.clock.now();
      if (left <= 0) throw new WaitTimeoutError('permit', semaphore, timeoutMs, result.reason);
      await sleep(Math.min(pollMs, left));
    }
  }

  /** Releases a permit this instance holds; throws {@link PermitNotHeldError} if it does not hold it (any more). */
  async release(permit: Permit): Promise<void> {
    const { engine } = this.decisions;
    const key = this.claims.get(claimKey(permit));
    try {
      const outcome = permit.instance === engine.holder.instance ? await engine.release(permit) : 'not-held';
      if (outcome === 'not-held') throw new PermitNotHeldError(permit.semaphore, permit.fencingToken, engine.holder.acquirer);
    } finally {
      if (key) {
        this.claims.delete(claimKey(permit));
        this.decisions.unclaim(permit.semaphore, key);
      }
    }
  }
}

function claimKey(permit: Permit): string {
  return `${permit.semaphore}\u0000${permit.fencingToken}`;
}
