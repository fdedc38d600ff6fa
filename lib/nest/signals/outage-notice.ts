import type { Logger } from '@nestjs/common';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';

/** How often, at most, a failing capability says at debug that it still fails (Nest's default logger shows debug). */
const STILL_FAILING_EVERY_MS = 30_000;

/**
 * What a capability says while its store cannot be reached: one warning when its calls start failing, one line when
 * one succeeds again, and in between a debug line at most every 30 s with how many calls failed, however often its
 * timers call. The one home of "one line per state change" for the capabilities' background calls (the permits' own
 * outage line is the connection's).
 */
export class OutageNotice {
  private failing = false;
  private saidAt = 0;
  private unsaid = 0;

  /**
   * @param what - The capability, as its lines begin (`Runtime schedules`).
   * @param meanwhile - What goes on while it fails, said in the warning (`armed schedules keep ...`).
   */
  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'log' | 'debug'>,
    private readonly what: string,
    private readonly meanwhile: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether an error is the store being out of reach (said once), not a failure worth a line of its own. */
  static isOutage(error: unknown): boolean {
    return error instanceof StoreUnavailableError;
  }

  /** A call failed: a warning if it is the first since the store last answered, else a debug line now and then. */
  failed(detail: string): void {
    const now = this.now();
    if (this.failing) {
      this.unsaid++;
      if (now - this.saidAt < STILL_FAILING_EVERY_MS) return;
      this.logger.debug(`${this.what}: still failing (${this.unsaid} call(s) since the last line): ${detail}`);
      this.saidAt = now;
      this.unsaid = 0;
      return;
    }
    this.failing = true;
    this.saidAt = now;
    this.unsaid = 0;
    this.logger.warn(`${this.what}: cannot reach the store (${detail}); ${this.meanwhile}`);
  }

  /** A call succeeded: one line if calls were failing. */
  succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.log(`${this.what}: the store answers again`);
  }
}
