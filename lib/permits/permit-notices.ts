import type { Clock } from '../core/clock';
import type { Log } from '../core/log';
import type { AcquireResult, PermitDenied } from './acquire-result';
import { DenyReason } from './deny-reason';
import type { PermitStore } from './permit-store';
import { permitMessages as messages } from './permits.messages';

/**
 * The log lines about the cluster's health that decisions reveal, one per change and not one per denial: the
 * cluster unreachable and reachable again, an unreadable value (once per key), a semaphore waiting out a
 * recovery (once per wait), a failed release, and the denials counted for the state dump.
 */
export class PermitNotices {
  private readonly reportedCorrupt = new Set<string>();
  /**
   * The end of the recovery wait last announced per semaphore. Only semaphores with a rebuilt entry get here, so it
   * is bounded by the definitions stored, not by the names callers ask for.
   */
  private readonly announcedRecovery = new Map<string, number>();
  private readonly deniedSinceDump = new Map<string, number>();
  private unavailable = false;

  constructor(
    private readonly store: PermitStore,
    private readonly clock: Clock,
    private readonly logger: Log,
    /**
     * `backend`: the kind of the permits' backend (`undefined`: a permit store of the user's), for what lifts a recovery
     * wait; `isOutage`: whether a failure is the store out of reach (then said once, as such, by the availability line).
     */
    private readonly options: { clockSkewMs: number; countDenials: boolean; backend?: string; isOutage(error: unknown): boolean },
  ) {}

  /** A release failed (the permit simply expires): a debug line when the store is out of reach, said once elsewhere. */
  releaseFailed(semaphore: string, error: unknown): void {
    if (this.options.isOutage(error)) this.logger.debug(messages.releaseFailed(semaphore, error));
    else this.logger.warn(messages.releaseFailed(semaphore, error));
  }

  /** Takes note of one decision: availability, corrupt values, recovery waits and (with a state dump) denials. */
  note(result: AcquireResult): void {
    // Only names with an entry are dumped: counting denials of others would keep every name a caller made up.
    if (!result.granted && this.options.countDenials && this.hasEntry(result.semaphore)) {
      this.deniedSinceDump.set(result.semaphore, (this.deniedSinceDump.get(result.semaphore) ?? 0) + 1);
    }
    const unreachable = !result.granted && (result.reason === DenyReason.STORE_UNAVAILABLE || result.reason === DenyReason.STORE_TIMEOUT);
    if (unreachable) this.noteAvailability(false, result.message);
    else this.noteAvailability(true);
    if (!result.granted && result.reason === DenyReason.CORRUPT_STATE) this.reportCorrupt(result.semaphore, result.message);
    if (!result.granted && result.reason === DenyReason.RECOVERING) this.announceRecovery(result);
  }

  /** Logs the transitions only, not every denied tick. */
  noteAvailability(available: boolean, detail = ''): void {
    if (available === !this.unavailable) return;
    this.unavailable = !available;
    if (available) this.logger.log(messages.available(this.options.backend));
    else this.logger.warn(messages.unavailable(detail, this.options.backend));
  }

  /** Logs an unreadable value once per key (again after {@link forgetCorrupt}). */
  reportCorrupt(key: string, reason: string): void {
    if (this.reportedCorrupt.has(key)) return;
    this.reportedCorrupt.add(key);
    this.logger.error(messages.corruptValue(key, reason));
  }

  /** Reports the key's next unreadable value again (after a repair). */
  forgetCorrupt(key: string): void {
    this.reportedCorrupt.delete(key);
  }

  /** Denials of `semaphore` here since the last call of {@link clearDenials} (counted only with a state dump). */
  denials(semaphore: string): number {
    return this.deniedSinceDump.get(semaphore) ?? 0;
  }

  /** Starts counting denials afresh (after a state dump). */
  clearDenials(): void {
    this.deniedSinceDump.clear();
  }

  /**
   * Whether this node saw an entry of `semaphore` in the store (readable now, or before it was lost). Per-name
   * state (counters, metric labels) is kept only for such names: they are bounded by the definitions written,
   * whereas the names callers ask for are not (they may be built from input).
   */
  hasEntry(semaphore: string): boolean {
    return this.store.peek(semaphore)?.entry !== undefined || this.store.remembered(semaphore) !== undefined;
  }

  /**
   * Warns once per semaphore that it waits out a recovery (every tick of every node is denied until then, and an
   * operator may be able to lift it: a brand-new cluster). Again only for a later recovery, once the announced wait
   * is over; a wait that converges to a longer one is not announced twice.
   */
  private announceRecovery(denied: PermitDenied): void {
    const now = this.clock.now();
    const announced = this.announcedRecovery.get(denied.semaphore);
    if (announced !== undefined && (Number.isNaN(announced) || now <= announced)) return;
    const graceUntil = this.store.peek(denied.semaphore)?.entry?.graceUntil;
    const until = graceUntil !== undefined ? graceUntil + this.options.clockSkewMs : Date.parse(/before (\S+)$/.exec(denied.message)?.[1] ?? '');
    this.announcedRecovery.set(denied.semaphore, until);
    this.logger.warn(messages.recovering(denied.semaphore, Number.isNaN(until) ? 'its recovery wait ends' : new Date(until).toISOString(), this.options.backend));
  }
}
