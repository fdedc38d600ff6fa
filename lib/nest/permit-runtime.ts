import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AcquireResult, PermitDenied } from '../permits/acquire-result';
import { DenyReason } from '../permits/deny-reason';
import { LocalPermits } from '../permits/local-permits';
import { livePermits, type Permit } from '../permits/permit';
import { PermitEngine, type DecideOptions } from '../permits/permit.engine';
import type { PermitStore } from '../permits/permit-store';
import { SemaphoreAdmin } from '../permits/semaphore-admin';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from './gatekeeper.constants';
import { messages } from './gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { MembershipRuntime } from './membership.runtime';
import { GatekeeperStartup } from './gatekeeper.startup';
import { GatekeeperTracing, type TraceSpan } from './gatekeeper-tracing';

/** Where the module is in its life: decisions are made only while `ready`; `draining` still refreshes running work. */
export type GatekeeperPhase = 'starting' | 'ready' | 'draining' | 'closed';

/**
 * What the gatekeeper's Nest parts share in one process: the permit engine and the operator's edits on
 * the module's store, the claims and runs in progress here, the phase of the module's life, and the log lines
 * about the cluster's health (one per change, not one per denial).
 * Used inside the module, not by applications.
 */
@Injectable()
export class PermitRuntime {
  readonly engine: PermitEngine;
  readonly admin: SemaphoreAdmin;
  readonly local = new LocalPermits();
  phase: GatekeeperPhase = 'starting';
  /** Why a background start (`connectInBackground`) gave up, if it did: the module will not start without a restart. */
  startFailure?: string;
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly reportedCorrupt = new Set<string>();
  /**
   * The end of the recovery wait last announced per semaphore. Only semaphores with a rebuilt entry get here, so it
   * is bounded by the definitions stored, not by the names callers ask for.
   */
  private readonly announcedRecovery = new Map<string, number>();
  private readonly deniedSinceDump = new Map<string, number>();
  private unavailable = false;
  private readonly decisionListeners = new Set<(result: AcquireResult) => void>();

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    startup: GatekeeperStartup,
    membership: MembershipRuntime,
    private readonly tracing: GatekeeperTracing,
  ) {
    this.admin = new SemaphoreAdmin(store, options.clock, {
      clockSkewMs: options.clockSkewMs,
      // Presence, while its view is confirmed (a view older than two intervals is not trusted to be complete).
      liveInstances: async () => membership.confirmedParticipants(),
    });
    this.engine = new PermitEngine(store, options.holder, options.clock, {
      clockSkewMs: options.clockSkewMs,
      quorum: options.quorum,
      storeTimeoutMs: options.storeTimeoutMs,
      onMissing: (name) => startup.recover(this.admin, name),
    });
  }

  /** Decides `semaphore` for a caller that holds its claim here (or needs none), only while ready. */
  async decide(semaphore: string, options: DecideOptions): Promise<AcquireResult> {
    return this.tracing.span('gatekeeper.acquire', { 'gatekeeper.semaphore': semaphore }, async (span) => {
      if (this.phase !== 'ready') return traced(span, this.notReady(semaphore));
      return traced(span, this.noted(await this.local.decision(this.engine.tryAcquire(semaphore, options))));
    });
  }

  /** Refreshes exactly `permit`; also while draining, so running work keeps its permit until it finishes. */
  async refresh(permit: Permit, options: DecideOptions): Promise<AcquireResult> {
    const attributes = { 'gatekeeper.semaphore': permit.semaphore, 'gatekeeper.token': permit.fencingToken };
    return this.tracing.span('gatekeeper.refresh', attributes, async (span) => {
      if (this.phase !== 'ready' && this.phase !== 'draining') return traced(span, this.notReady(permit.semaphore));
      return traced(span, this.noted(await this.local.decision(this.engine.refresh(permit, options))));
    });
  }

  /** Releases, never throwing: a permit that cannot be released simply expires. Whether this call released it. */
  async releaseQuietly(permit: Permit, notBefore = 0): Promise<boolean> {
    try {
      return (await this.engine.release(permit, notBefore)) === 'released';
    } catch (error) {
      this.logger.warn(messages.releaseFailed(permit.semaphore, error));
      return false;
    }
  }

  /** The denial while the module is not ready (starting, or shutting down). */
  notReady(semaphore: string): PermitDenied {
    return { granted: false, semaphore, reason: DenyReason.NOT_READY, message: `gatekeeper is ${this.phase}` };
  }

  /** The denial while other work in this process uses the semaphore's permit. */
  inUse(semaphore: string): PermitDenied {
    return { granted: false, semaphore, reason: DenyReason.IN_USE, message: 'another run in this process uses the permit' };
  }

  /** The live permits of `semaphore` on any node, as this node's view has them (no round trip). */
  viewedPermits(semaphore: string): Permit[] {
    const entry = this.store.peek(semaphore)?.entry;
    return entry ? livePermits(entry.permits, this.options.clock.now()) : [];
  }

  /** The last fencing token granted for `semaphore` as this node's view has it (0 if none). */
  viewedLastToken(semaphore: string): number {
    return this.store.peek(semaphore)?.entry?.lastToken ?? 0;
  }

  /**
   * Whether this node saw an entry of `semaphore` in the store (readable now, or before it was lost). Per-name
   * state (counters, metric labels) is kept only for such names: they are bounded by the definitions written,
   * whereas the names callers ask for are not (they may be built from input).
   */
  hasEntry(semaphore: string): boolean {
    return this.store.peek(semaphore)?.entry !== undefined || this.store.remembered(semaphore) !== undefined;
  }

  /** Denials of `semaphore` here since the last call of {@link clearDenials} (counted only with a state dump). */
  denials(semaphore: string): number {
    return this.deniedSinceDump.get(semaphore) ?? 0;
  }

  /** Starts counting denials afresh (after a state dump). */
  clearDenials(): void {
    this.deniedSinceDump.clear();
  }

  /** Hears every decision this node makes (acquire or refresh, by a job or by hand); returns the unsubscribe. */
  onDecision(listener: (result: AcquireResult) => void): () => void {
    this.decisionListeners.add(listener);
    return () => this.decisionListeners.delete(listener);
  }

  /** Logs the transitions only, not every denied tick. */
  noteAvailability(available: boolean, detail = ''): void {
    if (available === !this.unavailable) return;
    this.unavailable = !available;
    if (available) this.logger.log(messages.available());
    else this.logger.warn(messages.unavailable(detail));
  }

  /** Logs an unreadable value once per key (again after {@link forgetCorrupt}). */
  reportCorrupt(key: string, reason: string): void {
    if (this.reportedCorrupt.has(key)) return;
    this.reportedCorrupt.add(key);
    this.logger.error(messages.corruptValue(key, reason));
  }

  /**
   * Warns once per semaphore that it waits out a recovery (every tick of every node is denied until then, and an
   * operator may be able to lift it: a brand-new cluster). Again only for a later recovery, once the announced wait
   * is over; a wait that converges to a longer one is not announced twice.
   */
  private announceRecovery(denied: PermitDenied): void {
    const now = this.options.clock.now();
    const announced = this.announcedRecovery.get(denied.semaphore);
    if (announced !== undefined && (Number.isNaN(announced) || now <= announced)) return;
    const graceUntil = this.store.peek(denied.semaphore)?.entry?.graceUntil;
    const until = graceUntil !== undefined ? graceUntil + this.options.clockSkewMs : Date.parse(/before (\S+)$/.exec(denied.message)?.[1] ?? '');
    this.announcedRecovery.set(denied.semaphore, until);
    this.logger.warn(messages.recovering(denied.semaphore, Number.isNaN(until) ? 'its recovery wait ends' : new Date(until).toISOString()));
  }

  /** Reports the key's next unreadable value again (after a repair). */
  forgetCorrupt(key: string): void {
    this.reportedCorrupt.delete(key);
  }

  private noted(result: AcquireResult): AcquireResult {
    for (const listener of this.decisionListeners) listener(result);
    // Only names with an entry are dumped: counting denials of others would keep every name a caller made up.
    if (!result.granted && this.options.stateDumpIntervalMs && this.hasEntry(result.semaphore)) {
      this.deniedSinceDump.set(result.semaphore, (this.deniedSinceDump.get(result.semaphore) ?? 0) + 1);
    }
    const unreachable = !result.granted && (result.reason === DenyReason.STORE_UNAVAILABLE || result.reason === DenyReason.STORE_TIMEOUT);
    if (unreachable) this.noteAvailability(false, result.message);
    else this.noteAvailability(true);
    if (!result.granted && result.reason === DenyReason.CORRUPT_STATE) this.reportCorrupt(result.semaphore, result.message);
    if (!result.granted && result.reason === DenyReason.RECOVERING) this.announceRecovery(result);
    return result;
  }
}

/** A decision's outcome on its span: granted (with its token) or the reason it was denied. */
function traced(span: TraceSpan, result: AcquireResult): AcquireResult {
  span.set(result.granted
    ? { 'gatekeeper.outcome': result.outcome, 'gatekeeper.token': result.permit.fencingToken }
    : { 'gatekeeper.outcome': 'denied', 'gatekeeper.deny_reason': result.reason });
  return result;
}
