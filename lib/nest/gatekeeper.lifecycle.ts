import { GatekeeperError } from '../core/errors/gatekeeper.error';
import {
  Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleDestroy, type OnModuleInit,
} from '@nestjs/common';
import type { CapabilityRuntime } from './capability.runtime';
import { GATEKEEPER_BACKENDS, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from './gatekeeper.constants';
import type { PermitStore } from '../permits/permit-store';
import { messages } from './gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from './options/gatekeeper.options';
import { PresenceRuntime } from './presence/presence.runtime';
import { ElectionsRuntime } from './elections/elections.runtime';
import { AllocationRuntime } from './allocation/allocation.runtime';
import { TasksRuntime } from './tasks/tasks.runtime';
import { PermitsRuntime } from './permits/permits.runtime';
import { SchedulesRuntime } from './schedules/schedules.runtime';
import { RuntimeSchedules } from './schedules/runtime-schedules';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { StoreUnreachableError } from '../core/errors/store-unreachable.error';
import type { ModuleBackends } from './gatekeeper-stores.factory';
import { moduleConnectFailure } from '../backends/hazelcast/hazelcast-module-connection';
import type { ConnectTarget } from '../store/connect-failure';
import { setTimeout as sleep } from 'node:timers/promises';

/** While start-up waits for the cluster, how often it says so. */
const WAITING_REPORT_MS = 10_000;
/** While start-up waits for a PostgreSQL or Redis server, how often it tries again. */
const RETRY_MS = 500;

/**
 * The module's life, and only its order: connects the store on init (or in the background), then starts each
 * capability's runtime in turn (presence, permits, elections, allocation, tasks, schedules); on shutdown drains them in
 * reverse (no new work, running work finishes within `shutdownTimeout`), stops them in reverse (permits released,
 * presence withdrawn) and disconnects. What each step does lives in the runtime (see {@link CapabilityRuntime}).
 * Used inside the module, not by applications.
 */
@Injectable()
export class GatekeeperLifecycle implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  /** The start in progress when connecting in the background. */
  private starting?: Promise<void>;
  /** The runtimes in start order; drained and stopped in reverse. */
  private readonly runtimes: ReadonlyArray<{ name: string; runtime: CapabilityRuntime }>;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    @Inject(GATEKEEPER_BACKENDS) private readonly backends: ModuleBackends,
    private readonly permits: PermitsRuntime,
    presence: PresenceRuntime,
    elections: ElectionsRuntime,
    allocation: AllocationRuntime,
    tasks: TasksRuntime,
    schedules: SchedulesRuntime,
    runtimeSchedules: RuntimeSchedules,
  ) {
    this.runtimes = [
      // Presence first: the permits' start warns of jobs no live node can run, from presence's view.
      { name: 'presence', runtime: presence },
      { name: 'permits', runtime: permits },
      { name: 'elections', runtime: elections },
      { name: 'allocations', runtime: allocation },
      { name: 'tasks', runtime: tasks },
      // Last: stopped first, so the history of runs that ended in the drain is written before permits go.
      { name: 'schedules', runtime: schedules },
      // After the history: its ticks record runs. Stopped first: no timer fires while the rest stops.
      { name: 'runtime schedules', runtime: runtimeSchedules },
    ];
  }

  /**
   * Connects, then starts every capability; with `connectInBackground`, starts doing so and returns at once
   * (every permit is denied until it is done).
   */
  async onModuleInit(): Promise<void> {
    if (!this.options.connectInBackground) return this.start();
    this.logger.log(messages.connectingInBackground(this.target()));
    this.starting = this.start().catch((error: unknown) => {
      if (this.permits.phase !== 'starting') return;
      this.permits.startFailure = error instanceof Error ? error.message : String(error);
      this.logger.error(messages.backgroundStartFailed(error));
    });
  }

  /** The background start: settles once connected and started (or given up). */
  get started(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  /** Shutdown begins: no new runs from here on (ticks may still fire until schedules stop). */
  onModuleDestroy(): void {
    this.permits.close();
  }

  /** Drains every capability in reverse order, each for up to `shutdownTimeout`. */
  async beforeApplicationShutdown(): Promise<void> {
    for (const { name, runtime } of this.reversed()) {
      await runtime.drain(this.options.shutdownTimeoutMs).catch((error: unknown) => this.logger.warn(`${name}: ${(error as Error).message}`));
    }
  }

  /** Stops every capability in reverse order (also when no drain came first), then disconnects. */
  async onApplicationShutdown(): Promise<void> {
    // A background start may still wait for the cluster on behalf of any capability on it (not only permits): it
    // gives up now, so no runtime's stop waits on a start that never ends.
    this.backends.connection?.abandonStart();
    await this.stopAll();
    this.options.permitClock.stop();
    this.options.taskClock.stop();
    // A background start still waiting for the cluster gives up once the store is closed (its client is shut down
    // at once); shutdown does not wait for it.
    await this.store.close();
  }

  private async start(): Promise<void> {
    const stopWaiting = this.reportWaiting();
    try {
      await this.connect();
    } finally {
      stopWaiting();
    }
    this.logger.log(messages.connected(this.backends.of.permits.kind, this.options.holder));
    try {
      for (const { runtime } of this.runtimes) {
        if (this.permits.phase === 'draining' || this.permits.phase === 'closed') throw new GatekeeperError('shut down while starting');
        await runtime.start();
      }
    } catch (error) {
      await this.abandonStart();
      throw error;
    }
  }

  /**
   * Connects the store. A cluster that cannot be reached within `connectTimeout` is expected (no member started
   * yet), so it fails start-up with one line saying what was tried and the ways forward, not a stack.
   */
  private async connect(): Promise<void> {
    const server = this.backends.target;
    if (server && !this.options.connectInBackground) return this.connectToServer(server);
    try {
      await this.withPermitClock(() => this.store.connect({ clock: this.options.permitClock, events: this.permits.storeEvents() }));
    } catch (error) {
      const target = this.target();
      if (!(error instanceof StoreUnavailableError) || !target || this.options.connectInBackground || this.permits.phase !== 'starting') throw error;
      throw new StoreUnreachableError(moduleConnectFailure(error, this.options.hazelcast, target, this.options.connectTimeoutMs));
    }
  }

  /**
   * Connects to the PostgreSQL or Redis server, as to a cluster: a server not up yet (refused, not answering, starting)
   * is waited for up to `connectTimeout`, said once and every 10 s; a refused login or a missing database, which no
   * wait mends, fails at once. Either failure is one line naming the server, its address, where that came from and what
   * to do (`StoreUnreachableError`).
   */
  private async connectToServer(server: ConnectTarget): Promise<void> {
    const timeoutMs = this.options.connectTimeoutMs;
    const started = Date.now();
    let reported = started;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.withPermitClock(() => this.store.connect({ clock: this.options.permitClock, events: this.permits.storeEvents() }));
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || this.permits.phase !== 'starting') throw error;
        const failure = server.failure(error);
        const left = timeoutMs - (Date.now() - started);
        if (failure.kind !== 'unreachable' || left <= 0) throw new StoreUnreachableError(messages.serverUnreachable(server, failure, timeoutMs));
        if (attempt === 0) this.logger.warn(`${messages.waitingForServer(server, timeoutMs)}: ${failure.detail}`);
        else if (Date.now() - reported >= WAITING_REPORT_MS) {
          reported = Date.now();
          this.logger.warn(messages.stillWaitingForServer(server, reported - started, timeoutMs, failure.detail));
        }
        await sleep(Math.min(RETRY_MS, left));
      }
    }
  }

  /**
   * Reads the permits' store's clock (where it has one) before `connect` opens the permits' view, so nothing is
   * stamped or decided on another clock; says so when the reading was slower than `maxClockSkew`.
   */
  private async withPermitClock(connect: () => Promise<void>): Promise<void> {
    const clock = this.options.permitClock;
    if (!clock.isAttached()) return connect();
    const backend = this.backends.of.permits;
    await backend.open();
    try {
      await clock.start();
      await connect();
    } finally {
      await backend.close(); // the store holds its own open from here on
    }
    const aheadMs = clock.aheadMs();
    if (aheadMs !== undefined && aheadMs > this.options.clockSkewMs) {
      this.logger.warn(messages.storeClockImprecise(backend.kind, aheadMs, this.options.clockSkewMs));
    }
  }

  /** A failed boot must not leave a client running that keeps the process alive. */
  private async abandonStart(): Promise<void> {
    // Opened already (a later capability failed): no new runs while the rest stops. A start that gave up before
    // opening stays 'starting', so health can say why.
    if (this.permits.phase === 'ready') this.permits.close();
    await this.stopAll(0);
    await this.store.close().catch(() => undefined);
  }

  /** Stops the runtimes in reverse order; with `drainMs`, each is drained that long first (a failed start: 0). */
  private async stopAll(drainMs?: number): Promise<void> {
    for (const { name, runtime } of this.reversed()) {
      if (drainMs !== undefined) await runtime.drain(drainMs).catch(() => undefined);
      await runtime.stop().catch((error: unknown) => this.logger.warn(`${name}: ${(error as Error).message}`));
    }
  }

  private reversed(): Array<{ name: string; runtime: CapabilityRuntime }> {
    return [...this.runtimes].reverse();
  }

  /** The cluster the permits' Hazelcast connection is made for, for the start-up lines; `undefined` on other backends. */
  private target(): { clusterName: string; members: string[] } | undefined {
    const own = this.options.backends.permits === 'hazelcast' && !this.options.hazelcast.client;
    return own ? this.backends.connection?.target() : undefined;
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
