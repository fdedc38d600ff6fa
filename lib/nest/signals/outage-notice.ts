import type { Logger } from '@nestjs/common';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';

/**
 * What a capability says while its store cannot be reached: one warning when its calls start failing, one line when
 * one succeeds again, and the failures in between at debug, however often its timers call. The one home of "one line
 * per state change" for the capabilities' background calls (the permits' own outage line is the connection's).
 */
export class OutageNotice {
  private failing = false;

  /**
   * @param what - The capability, as its lines begin (`Runtime schedules`).
   * @param meanwhile - What goes on while it fails, said in the warning (`armed schedules keep ...`).
   */
  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'log' | 'debug'>,
    private readonly what: string,
    private readonly meanwhile: string,
  ) {}

  /** Whether an error is the store being out of reach (said once), not a failure worth a line of its own. */
  static isOutage(error: unknown): boolean {
    return error instanceof StoreUnavailableError;
  }

  /** A call failed: a warning if it is the first since the store last answered, else a debug line. */
  failed(detail: string): void {
    if (this.failing) return this.logger.debug(`${this.what}: still failing: ${detail}`);
    this.failing = true;
    this.logger.warn(`${this.what}: cannot reach the store (${detail}); ${this.meanwhile}`);
  }

  /** A call succeeded: one line if calls were failing. */
  succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.log(`${this.what}: the store answers again`);
  }
}
