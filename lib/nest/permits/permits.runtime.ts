import { GatekeeperError } from '../../core/errors/gatekeeper.error';
import { permitsBackendKind } from '../options/backend-choice.options';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcquireResult, PermitDenied } from '../../permits/acquire-result';
import { LocalPermits } from '../../permits/local-permits';
import { PermitDecisions, type GatekeeperPhase } from '../../permits/permit-decisions';
import { livePermits, type Permit } from '../../permits/permit';
import { PermitEngine } from '../../permits/permit.engine';
import { type DecideOptions } from '../../permits/permit-engine.options';
import { PermitExecutor } from '../../permits/permit-executor';
import type { PermitStore, PermitStoreEvents } from '../../permits/permit-store';
import { SemaphoreAdmin } from '../../permits/semaphore-admin';
import type { HeldTick } from '../../permits/definition.validator';
import type { CapabilityRuntime } from '../capability.runtime';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import { OutageNotice } from '../signals/outage-notice';
import { messages } from '../gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { GatekeeperTracing } from '../signals/gatekeeper-tracing';
import { PresenceRuntime } from '../presence/presence.runtime';
import { PermitNotices } from './permit-notices';
import { PermitsStartup } from './permits.startup';


/**
 * The permits capability in one process: the engine and the operator's edits on the module's store, the executor
 * every run under a permit goes through, the phase of the module's life (decisions only while `ready`), and its
 * part of start-up and shutdown: publish the definitions and open; let running work finish; release what is held.
 * Used inside the module, not by applications.
 */
@Injectable()
export class PermitsRuntime implements CapabilityRuntime {
  readonly engine: PermitEngine;
  readonly admin: SemaphoreAdmin;
  readonly local = new LocalPermits();
  /** Every acquire, refresh and release of this process, only while ready (see {@link PermitDecisions}). */
  readonly decisions: PermitDecisions;
  readonly executor: PermitExecutor;
  readonly notices: PermitNotices;
  /** Why a background start (`connectInBackground`) gave up, if it did: the module will not start without a restart. */
  startFailure?: string;
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  /** Tokens other capabilities leave to lapse at shutdown (work that outlived its drain), asked for at {@link stop}. */
  private readonly keepers = new Set<() => Iterable<number>>();
  private dumpTimer?: NodeJS.Timeout;
  private stopping?: Promise<void>;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly startup: PermitsStartup,
    private readonly presence: PresenceRuntime,
    private readonly tracing: GatekeeperTracing,
  ) {
    this.admin = new SemaphoreAdmin(store, options.permitClock, {
      clockSkewMs: options.clockSkewMs,
      // Presence, while its view is confirmed (a view older than two intervals is not trusted to be complete).
      liveInstances: async () => presence.confirmedParticipants(),
      heldTick: (semaphore) => startup.heldTicks?.(semaphore),
    });
    this.engine = new PermitEngine(store, options.holder, options.permitClock, {
      clockSkewMs: options.clockSkewMs,
      quorum: options.quorum,
      storeTimeoutMs: options.storeTimeoutMs,
      onMissing: (name) => startup.recover(this.admin, name),
    });
    this.notices = new PermitNotices(store, options.permitClock, {
      clockSkewMs: options.clockSkewMs,
      countDenials: Boolean(options.stateDumpIntervalMs),
      backend: permitsBackendKind(options),
    });
    this.decisions = new PermitDecisions(this.engine, this.local, options.permitClock, options.clockSkewMs, tracing, {
      note: (result) => this.notices.note(result),
      // With the store out of reach, said once as "Cluster unreachable": the permit simply expires.
      releaseFailed: (semaphore, error) => (OutageNotice.isOutage(error) ? this.logger.debug(messages.releaseFailed(semaphore, error)) : this.logger.warn(messages.releaseFailed(semaphore, error))),
    });
    this.executor = new PermitExecutor(this.decisions);
  }

  /** Where the module is in its life (see {@link GatekeeperPhase}). */
  get phase(): GatekeeperPhase {
    return this.decisions.phase;
  }

  set phase(phase: GatekeeperPhase) {
    this.decisions.phase = phase;
  }

  /** What the store tells this capability once connected: losses, returns, rebuilt and unreadable entries. */
  storeEvents(): PermitStoreEvents {
    return {
      disconnected: () => this.notices.noteAvailability(false, 'connection lost'),
      reconnected: () => this.notices.noteAvailability(true),
      entriesLost: (names) => this.startup.recoverAll(this.admin, names),
      corruptValue: (key, reason) => this.notices.reportCorrupt(key, reason),
    };
  }

  /** Publishes the definitions, checks every `@ClusterSingleton`, then opens: decisions are made from here on. */
  async start(): Promise<void> {
    if (this.phase !== 'starting') throw new GatekeeperError('shut down while starting');
    await this.startup.start(this.admin);
    if (this.phase !== 'starting') throw new GatekeeperError('shut down while starting');
    this.phase = 'ready';
    this.startup.warnRunsNowhere(this.presence.confirmedParticipants());
    if (this.options.stateDumpIntervalMs) {
      this.dumpTimer = setInterval(() => void this.dumpState(), this.options.stateDumpIntervalMs);
      this.dumpTimer.unref();
    }
  }

  /** Shutdown begins: no new runs from here on (ticks may still fire until schedules stop). */
  close(): void {
    // A background start still under way must never turn 'ready' (and start jobs) once shutdown began.
    if (this.phase === 'ready' || this.phase === 'starting') this.phase = 'draining';
    clearInterval(this.dumpTimer);
  }

  /**
   * Waits for running jobs and decisions in flight, up to `timeoutMs`, while leases keep their permits alive (no new
   * run starts since {@link close}, which shutdown called first).
   */
  async drain(timeoutMs: number): Promise<void> {
    const drained = await Promise.race([this.local.idle().then(() => true), sleep(timeoutMs, false, { ref: false })]);
    if (!drained) this.logger.warn(messages.shutdownRunning(this.local.leases.size));
  }

  /**
   * Releases the permits of finished work (work still running, and tokens another capability keeps, are left to
   * lapse). Decisions still in flight are waited for first (each has a deadline): a grant that lands after the
   * release would otherwise be held, or run, while another node holds the permit.
   */
  stop(): Promise<void> {
    this.stopping ??= this.releaseAll();
    return this.stopping;
  }

  /**
   * Tells the permits the shortest held tick of this node's jobs per semaphore (the schedules do): an edit here to a
   * shorter duration is refused unless forced, and one from elsewhere (the CLI) is warned about.
   */
  tellHeldTicks(heldTicks: (semaphore: string) => HeldTick | undefined): void {
    this.startup.heldTicks = heldTicks;
  }

  /** Registers tokens to leave to lapse at {@link stop} (leadership or allocation work that outlived its drain). */
  keepAtStop(tokens: () => Iterable<number>): void {
    this.keepers.add(tokens);
  }

  /** Decides `semaphore` for a caller that holds its claim here (or needs none), only while ready. */
  decide(semaphore: string, options: DecideOptions): Promise<AcquireResult> {
    return this.decisions.decide(semaphore, options);
  }

  /** Refreshes exactly `permit`; also while draining, so running work keeps its permit until it finishes. */
  refresh(permit: Permit, options: DecideOptions): Promise<AcquireResult> {
    return this.decisions.refresh(permit, options);
  }

  /** Releases, never throwing: a permit that cannot be released simply expires. Whether this call released it. */
  releaseQuietly(permit: Permit, notBefore = 0): Promise<boolean> {
    return this.decisions.releaseQuietly(permit, notBefore);
  }

  /** The denial while the module is not ready (starting, or shutting down). */
  notReady(semaphore: string): PermitDenied {
    return this.decisions.notReady(semaphore);
  }

  /** The live permits of `semaphore` on any node, as this node's view has them (no round trip). */
  viewedPermits(semaphore: string): Permit[] {
    const entry = this.store.peek(semaphore)?.entry;
    return entry ? livePermits(entry.permits, this.options.permitClock.now()) : [];
  }

  /** Until when `semaphore` waits out a recovery before granting again (its rebuilt entry's), as this node's view has it. */
  viewedGraceUntil(semaphore: string): number | undefined {
    return this.store.peek(semaphore)?.entry?.graceUntil;
  }

  /** The last fencing token granted for `semaphore` as this node's view has it (0 if none). */
  viewedLastToken(semaphore: string): number {
    return this.store.peek(semaphore)?.entry?.lastToken ?? 0;
  }

  /** Hears every decision this node makes (acquire or refresh, by a job or by hand); returns the unsubscribe. */
  onDecision(listener: (result: AcquireResult) => void): () => void {
    return this.decisions.onDecision(listener);
  }

  /** Logs one line per semaphore (holders, expiries, tokens, denials here since the last dump). */
  async dumpState(): Promise<void> {
    try {
      const now = this.options.permitClock.now();
      for (const status of await this.admin.permits()) {
        this.logger.log(`state ${messages.stateLine(status, now, this.notices.denials(status.name))}`);
      }
      this.notices.clearDenials();
    } catch (error) {
      this.logger.warn(`state dump failed: ${(error as Error).message}`);
    }
  }

  private async releaseAll(): Promise<void> {
    // A start that gave up before opening stays 'starting' (health says why it gave up); else closed for good.
    if (this.phase !== 'starting') {
      this.close();
      this.phase = 'closed';
    }
    await this.local.decisionsSettled();
    const busy = new Set([...this.local.leases].map((lease) => lease.permit.fencingToken));
    for (const tokens of this.keepers) for (const token of tokens()) busy.add(token);
    for (const lease of this.local.leases) lease.end('this node is shutting down');
    const released: Permit[] = [];
    const kept: Permit[] = [];
    for (const permit of this.engine.heldPermits()) {
      if (busy.has(permit.fencingToken)) kept.push(permit);
      else if (await this.releaseQuietly(permit)) released.push(permit);
    }
    if (released.length > 0 || kept.length > 0) this.logger.log(messages.releasedAtShutdown(released, kept));
    this.engine.dispose();
    this.startup.stop();
  }
}
