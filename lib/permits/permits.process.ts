import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../core/clock';
import { GatekeeperError } from '../core/errors/gatekeeper.error';
import type { Log } from '../core/log';
import type { AcquireResult, PermitDenied } from './acquire-result';
import type { HeldTick } from './definition.validator';
import type { KnownDefinitions } from './known-definitions';
import { livePermits } from './permit.rules';
import type { Holder, NodeIdentity, Permit } from './permit';
import { PermitDecisions, type DecisionTracer, type GatekeeperPhase } from './permit-decisions';
import type { DecideOptions } from './permit-engine.options';
import { PermitExecutor } from './permit-executor';
import { PermitNotices } from './permit-notices';
import type { PermitStore, PermitStoreEvents } from './permit-store';
import { permitMessages as messages } from './permits.messages';
import { PermitEngine } from './permit.engine';
import { SemaphoreAdmin } from './semaphore-admin';

/** The module's settings the permits of one process run by (its resolved options). */
export interface PermitsProcessOptions {
  readonly holder: Holder;
  readonly permitClock: Clock;
  readonly clockSkewMs: number;
  readonly quorum: number | undefined;
  readonly storeTimeoutMs: number;
  /** Log the state of every semaphore at this interval; `undefined`: never. */
  readonly stateDumpIntervalMs: number | undefined;
}

/** What the permits of one process are wired to besides their store. */
export interface PermitsProcessParts {
  /** The live instances presence confirms, or `undefined` while its view is not confirmed. */
  liveInstances(): readonly NodeIdentity[] | undefined;
  /** Runs each decision in a span of the app's tracer. */
  readonly tracer: DecisionTracer;
  readonly log: Log;
  /** The permits' backend kind, for what log lines name (`undefined`: a permit store of the user's). */
  readonly backend?: string;
  /** Whether a failure is the store out of reach (said once as such), so a failed release is only a debug line. */
  isOutage(error: unknown): boolean;
}

/**
 * The permits capability in one process: the engine and the operator's edits on the module's store, the executor
 * every run under a permit goes through, the phase of the module's life (decisions only while `ready`), and its
 * part of start-up and shutdown: publish the definitions and open; let running work finish; release what is held.
 */
export class PermitsProcess {
  readonly engine: PermitEngine;
  readonly admin: SemaphoreAdmin;
  /** Every acquire, refresh and release of this process, only while ready (see {@link PermitDecisions}). */
  readonly decisions: PermitDecisions;
  readonly executor: PermitExecutor;
  readonly notices: PermitNotices;
  /** Why a background start (`connectInBackground`) gave up, if it did: the module will not start without a restart. */
  startFailure?: string;
  /** Tokens other capabilities leave to lapse at shutdown (work that outlived its drain), asked for at {@link stop}. */
  private readonly keepers = new Set<() => Iterable<number>>();
  private dumpTimer?: NodeJS.Timeout;
  private stopping?: Promise<void>;

  constructor(
    private readonly options: PermitsProcessOptions,
    private readonly store: PermitStore,
    private readonly definitions: KnownDefinitions,
    private readonly parts: PermitsProcessParts,
  ) {
    const { log } = parts;
    this.admin = new SemaphoreAdmin(store, options.permitClock, {
      clockSkewMs: options.clockSkewMs,
      // Presence, while its view is confirmed (a view older than two intervals is not trusted to be complete).
      liveInstances: async () => parts.liveInstances(),
      heldTick: (semaphore) => definitions.heldTicks?.(semaphore),
    });
    this.engine = new PermitEngine(store, options.holder, options.permitClock, {
      clockSkewMs: options.clockSkewMs,
      quorum: options.quorum,
      storeTimeoutMs: options.storeTimeoutMs,
      onMissing: (name) => definitions.recover(this.admin.edits, name),
    });
    this.notices = new PermitNotices(store, options.permitClock, log, {
      clockSkewMs: options.clockSkewMs,
      countDenials: Boolean(options.stateDumpIntervalMs),
      backend: parts.backend,
      isOutage: (error) => parts.isOutage(error),
    });
    this.decisions = new PermitDecisions(this.engine, options.permitClock, options.clockSkewMs, parts.tracer, this.notices);
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
      entriesLost: (names) => this.definitions.recoverAll(this.admin.edits, names),
      corruptValue: (key, reason) => this.notices.reportCorrupt(key, reason),
    };
  }

  /** Publishes the definitions, checks every `@ClusterSingleton`, then opens: decisions are made from here on. */
  async start(): Promise<void> {
    if (this.phase !== 'starting') throw new GatekeeperError('shut down while starting');
    await this.definitions.start(this.admin.edits);
    if (this.phase !== 'starting') throw new GatekeeperError('shut down while starting');
    this.phase = 'ready';
    this.definitions.warnRunsNowhere(this.parts.liveInstances());
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
    const drained = await Promise.race([this.decisions.idle().then(() => true), sleep(timeoutMs, false, { ref: false })]);
    if (!drained) this.parts.log.warn(messages.shutdownRunning(this.decisions.leases.size));
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
    this.definitions.heldTicks = heldTicks;
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

  /** This node's view of the semaphores (no round trip), read directly where a decision reads it: a run now's eligibility. */
  get view(): Pick<PermitStore, 'peek'> {
    return this.store;
  }

  /** The live permits of `semaphore` on any node, as this node's view has them (no round trip). */
  viewedPermits(semaphore: string): Permit[] {
    const entry = this.store.peek(semaphore)?.entry;
    return entry ? livePermits(entry.permits, this.options.permitClock.now()) : [];
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
        this.parts.log.log(`state ${messages.stateLine(status, now, this.notices.denials(status.name))}`);
      }
      this.notices.clearDenials();
    } catch (error) {
      this.parts.log.warn(`state dump failed: ${(error as Error).message}`);
    }
  }

  private async releaseAll(): Promise<void> {
    // A start that gave up before opening stays 'starting' (health says why it gave up); else closed for good.
    if (this.phase !== 'starting') {
      this.close();
      this.phase = 'closed';
    }
    await this.decisions.decisionsSettled();
    const busy = new Set([...this.decisions.leases].map((lease) => lease.permit.fencingToken));
    for (const tokens of this.keepers) for (const token of tokens()) busy.add(token);
    for (const lease of this.decisions.leases) lease.end('this node is shutting down');
    const released: Permit[] = [];
    const kept: Permit[] = [];
    for (const permit of this.engine.heldPermits()) {
      if (busy.has(permit.fencingToken)) kept.push(permit);
      else if (await this.releaseQuietly(permit)) released.push(permit);
    }
    if (released.length > 0 || kept.length > 0) this.parts.log.log(messages.releasedAtShutdown(released, kept));
    this.engine.dispose();
    this.definitions.stop();
  }
}
