import {
  Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleDestroy, type OnModuleInit,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Permit } from '../permits/permit';
import type { PermitStore } from '../permits/permit-store';
import { HazelcastPermitStore } from '../permits/hazelcast-permit.store';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from './gatekeeper.constants';
import { messages } from './gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { GatekeeperStartup } from './gatekeeper.startup';
import { MembershipRuntime } from './membership.runtime';
import { LeaderElections } from './leader-elections';
import { Allocations } from './allocations.runtime';
import { Tasks } from './tasks.runtime';
import { PermitRuntime } from './permit-runtime';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { ClusterUnreachableError } from '../core/errors/cluster-unreachable.error';
import { hazelcastTargetSources } from './gatekeeper-stores.factory';

/** While start-up waits for the cluster, how often it says so. */
const WAITING_REPORT_MS = 10_000;

/**
 * The module's life: connects on init (or in the background), publishes definitions, says what it
 * waits for, dumps state at an interval; on shutdown stops new runs, waits for running jobs and decisions in
 * flight, releases this instance's permits (and says so) and disconnects.
 * Used inside the module, not by applications.
 */
@Injectable()
export class GatekeeperLifecycle implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private dumpTimer?: NodeJS.Timeout;
  /** The start in progress when connecting in the background. */
  private starting?: Promise<void>;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly startup: GatekeeperStartup,
    private readonly runtime: PermitRuntime,
    private readonly cluster: MembershipRuntime,
    private readonly elections: LeaderElections,
    private readonly allocations: Allocations,
    private readonly tasks: Tasks,
  ) {}

  /**
   * Connects, loads definitions into the cluster and checks every `@ClusterSingleton`; with
   * `connectInBackground`, starts doing so and returns at once (every permit is denied until it is done).
   */
  async onModuleInit(): Promise<void> {
    if (!this.options.connectInBackground) return this.start();
    this.logger.log(messages.connectingInBackground(this.target()));
    this.starting = this.start().catch((error: unknown) => {
      if (this.runtime.phase !== 'starting') return;
      this.runtime.startFailure = error instanceof Error ? error.message : String(error);
      this.logger.error(messages.backgroundStartFailed(error));
    });
  }

  /** The background start: settles once connected and started (or given up). */
  get started(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  /** Logs one line per semaphore (holders, expiries, tokens, denials here since the last dump). */
  async dumpState(): Promise<void> {
    try {
      const now = this.options.clock.now();
      for (const status of await this.runtime.admin.permits()) {
        this.logger.log(`state ${messages.stateLine(status, now, this.runtime.denials(status.name))}`);
      }
      this.runtime.clearDenials();
    } catch (error) {
      this.logger.warn(`state dump failed: ${(error as Error).message}`);
    }
  }

  /** Shutdown begins: no new runs from here on (ticks may still fire until schedules stop). */
  onModuleDestroy(): void {
    // A background start still under way must never turn 'ready' (and start jobs) once shutdown began.
    if (this.runtime.phase === 'ready' || this.runtime.phase === 'starting') this.runtime.phase = 'draining';
    clearInterval(this.dumpTimer);
  }

  /**
   * Hands leadership over (leader work told, waited for up to `shutdownTimeout`, then released), then waits for
   * running jobs and decisions in flight, up to `shutdownTimeout`, while leases keep permits alive.
   */
  async beforeApplicationShutdown(): Promise<void> {
    // Tasks first: claim no more, let running handlers finish within the shutdown timeout, hand the rest back.
    await this.tasks.stop(this.options.shutdownTimeoutMs).catch((error: unknown) => this.logger.warn(`tasks: ${(error as Error).message}`));
    await this.allocations.stop().catch((error: unknown) => this.logger.warn(`allocations: ${(error as Error).message}`));
    await this.elections.stop().catch((error: unknown) => this.logger.warn(`elections: ${(error as Error).message}`));
    const { local } = this.runtime;
    const drained = await Promise.race([local.idle().then(() => true), sleep(this.options.shutdownTimeoutMs, false, { ref: false })]);
    if (!drained) this.logger.warn(messages.shutdownRunning(local.leases.size));
  }

  /**
   * Releases the permits of finished work (a job still running keeps its permit until it expires) and
   * disconnects. Decisions still in flight are waited for first (each has a deadline): a grant that lands after
   * the release would otherwise be held, or run, while another node holds the permit.
   */
  async onApplicationShutdown(): Promise<void> {
    const { runtime } = this;
    await this.tasks.stop(this.options.shutdownTimeoutMs).catch(() => undefined); // when beforeApplicationShutdown did not run
    await this.allocations.stop().catch(() => undefined); // when beforeApplicationShutdown did not run (app.close() of a context)
    await this.elections.stop().catch(() => undefined);
    runtime.phase = 'closed';
    await runtime.local.decisionsSettled();
    const busy = new Set([...runtime.local.leases].map((lease) => lease.permit.fencingToken));
    // Leadership whose work outlived the drain is left to lapse too: releasing it would elect another leader now.
    for (const token of this.elections.keptTokens()) busy.add(token);
    // So are allocation parts whose onRevoked overran: their resources stay listed until the permit lapses.
    for (const token of this.allocations.keptTokens()) busy.add(token);
    for (const lease of runtime.local.leases) lease.end('this node is shutting down');
    const released: Permit[] = [];
    const kept: Permit[] = [];
    for (const permit of runtime.engine.heldPermits()) {
      if (busy.has(permit.fencingToken)) kept.push(permit);
      else if (await runtime.releaseQuietly(permit)) released.push(permit);
    }
    if (released.length > 0 || kept.length > 0) this.logger.log(messages.releasedAtShutdown(released, kept));
    runtime.engine.dispose();
    this.startup.stop();
    // Presence first: others see this instance leave at once.
    await this.cluster.stop().catch((error: unknown) => this.logger.warn(`presence: ${(error as Error).message}`));
    // A background start still waiting for the cluster gives up once the store is closed (its client is shut down
    // at once); shutdown does not wait for it.
    await this.store.close();
  }

  private async start(): Promise<void> {
    const { runtime } = this;
    const stopWaiting = this.reportWaiting();
    try {
      await this.connect();
    } finally {
      stopWaiting();
    }
    this.logger.log(messages.connected(this.store.constructor.name, this.options.holder));
    try {
      if (runtime.phase !== 'starting') throw new Error('shut down while starting');
      await this.startup.start(runtime.admin);
      if (runtime.phase !== 'starting') throw new Error('shut down while starting');
      await this.cluster.start();
    } catch (error) {
      await this.abandonStart();
      throw error;
    }
    if (runtime.phase !== 'starting') {
      // Shut down meanwhile: the shutdown may have closed before presence started; withdraw it now.
      await this.cluster.stop().catch(() => undefined);
      return;
    }
    runtime.phase = 'ready';
    this.startup.warnRunsNowhere(this.cluster.confirmedParticipants());
    try {
      await this.elections.start();
      await this.allocations.start();
      await this.tasks.start();
    } catch (error) {
      runtime.phase = 'draining';
      await this.abandonStart();
      throw error;
    }
    if (this.options.stateDumpIntervalMs) {
      this.dumpTimer = setInterval(() => void this.dumpState(), this.options.stateDumpIntervalMs);
      this.dumpTimer.unref();
    }
  }

  /**
   * Connects the store. A cluster that cannot be reached within `connectTimeout` is expected (no member started
   * yet), so it fails start-up with one line saying what was tried and the ways forward, not a stack.
   */
  private async connect(): Promise<void> {
    const { runtime } = this;
    try {
      await this.store.connect({
        clock: this.options.clock,
        events: {
          disconnected: () => runtime.noteAvailability(false, 'connection lost'),
          reconnected: () => runtime.noteAvailability(true),
          entriesLost: (names) => this.startup.recoverAll(runtime.admin, names),
          corruptValue: (key, reason) => runtime.reportCorrupt(key, reason),
        },
      });
    } catch (error) {
      const target = this.target();
      if (!(error instanceof StoreUnavailableError) || !target || this.options.connectInBackground || runtime.phase !== 'starting') throw error;
      const sources = hazelcastTargetSources(this.options);
      throw new ClusterUnreachableError(messages.clusterUnreachable({ ...target, sources }, this.options.connectTimeoutMs));
    }
  }

  /** A failed boot must not leave a client running that keeps the process alive. */
  private async abandonStart(): Promise<void> {
    await this.tasks.stop(0).catch(() => undefined);
    await this.allocations.stop().catch(() => undefined);
    await this.elections.stop().catch(() => undefined);
    this.runtime.engine.dispose();
    this.startup.stop();
    await this.cluster.stop().catch(() => undefined);
    await this.store.close().catch(() => undefined);
  }

  /** The cluster a Hazelcast store connects to, for the start-up lines; `undefined` for other stores. */
  private target(): { clusterName: string; members: string[] } | undefined {
    return this.store instanceof HazelcastPermitStore && !this.options.hazelcast.client ? this.store.target() : undefined;
  }

  /** Says what start-up waits for, then again every few seconds until connected; returns the stop. */
  private reportWaiting(): () => void {
    const target = this.target();
    if (!target) return () => undefined;
    const timeoutMs = this.options.connectInBackground ? undefined : this.options.connectTimeoutMs;
    if (!this.options.connectInBackground) this.logger.log(messages.connecting(target, timeoutMs));
    const started = Date.now();
    const timer = setInterval(() => {
      const elapsedMs = Date.now() - started;
      // Not in the last moments before giving up: the failure says it next, in one line.
      if (timeoutMs === undefined || elapsedMs < timeoutMs - WAITING_REPORT_MS / 2) this.logger.warn(messages.stillConnecting(target, elapsedMs, timeoutMs));
    }, WAITING_REPORT_MS);
    timer.unref();
    return () => clearInterval(timer);
  }
}
