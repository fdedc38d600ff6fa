import {
  Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleDestroy, type OnModuleInit,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcquireResult, PermitDenied } from '../permits/acquire-result';
import {
  SemaphoreAdmin, type GroupMigrationReport, type GroupMigrationRequest, type MigrationChange, type SemaphoreDefinitionPatch,
  type UndoMigrationReport, type UndoMigrationRequest,
} from '../permits/semaphore-admin';
import { LocalPermits } from '../permits/local-permits';
import { PermitEngine, type DecideOptions } from '../permits/permit.engine';
import type { SemaphoreStatus } from '../permits/semaphore-status';
import { PermitLease } from '../permits/permit-lease';
import { PermitNotHeldError } from '../permits/errors/permit-not-held.error';
import { PermitTimeoutError } from '../permits/errors/permit-timeout.error';
import { validateSemaphoreName } from '../permits/definition.validator';
import { DenyReason } from '../permits/deny-reason';
import { parseDuration } from '../core/duration';
import { livePermits, type NodeIdentity, type Permit } from '../permits/permit';
import type { DurationInput, SemaphoreDefinition, SemaphoreDefinitionInput } from '../permits/semaphore-definition';
import type { PermitStore } from '../permits/permit-store';
import { HazelcastPermitStore } from '../permits/hazelcast-permit.store';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from './gatekeeper.constants';
import { messages } from './gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { GatekeeperStartup } from './gatekeeper.startup';
import { permitContext } from './permit-context';

/** While start-up waits for the cluster, how often it says so. */
const WAITING_REPORT_MS = 5_000;

/** Options of {@link GatekeeperService.acquire}. */
export interface AcquireOptions {
  /** How long to keep trying. Default `'30s'`. */
  timeout?: DurationInput;
  /** Pause between attempts. Default: a tenth of the timeout, between 50 ms and 1 s. */
  pollInterval?: DurationInput;
}

/** Options of {@link GatekeeperService.withPermit}. */
export interface WithPermitOptions {
  /** Stop keeping the permit alive after this long and fire the lease's signal (ShedLock's `lockAtMostFor`). Default: no limit. */
  maxRunTime?: DurationInput;
  /** Refresh the permit in the background while `fn` runs. Default `true`. */
  keepAlive?: boolean;
}

/** The result of {@link GatekeeperService.withPermit}: the function ran under a permit, or the permit was denied. */
export type WithPermitResult<T> = { ran: true; value: T; permit: Permit } | { ran: false; denied: PermitDenied };

/** @internal How a run under a permit is taken and given back (decorated ticks and withPermit). */
export interface RunOptions {
  local?: boolean;
  keepAlive?: boolean;
  maxRunTimeMs?: number;
  /** Release after the run, keeping the permit until this many ms after its grant (release mode, withPermit). */
  releaseAfter?: { lockAtLeastForMs: number };
}

/** @internal What a run under a permit came to. */
export type RunOutcome<T> = { ran: true; value: T; permit: Permit; outcome: 'granted' | 'refreshed' | 'held' } | { ran: false; denied: PermitDenied };

/**
 * The gatekeeper's API for your code: permits by hand, the permit of the running job, definitions (validated,
 * applied cluster-wide by compare-and-set) and the state of every permit. Connects on module init; on shutdown
 * waits for running jobs and decisions in flight, releases this instance's permits and disconnects.
 */
@Injectable()
export class GatekeeperService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly engine: PermitEngine;
  private readonly admin: SemaphoreAdmin;
  private readonly local = new LocalPermits();
  private readonly reportedCorrupt = new Set<string>();
  private readonly deniedSinceDump = new Map<string, number>();
  /** Claims taken by acquire(), given back by release(). */
  private readonly manualClaims = new Map<string, symbol>();
  private dumpTimer?: NodeJS.Timeout;
  /** `draining`: shutting down, no new runs, but running jobs keep their permits alive until they finish. */
  private phase: 'starting' | 'ready' | 'draining' | 'closed' = 'starting';
  /** The start in progress when connecting in the background. */
  private starting?: Promise<void>;
  private unavailable = false;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly startup: GatekeeperStartup,
  ) {
    this.admin = new SemaphoreAdmin(store, options.clock, { clockSkewMs: options.clockSkewMs });
    this.engine = new PermitEngine(store, options.holder, options.clock, {
      clockSkewMs: options.clockSkewMs,
      quorum: options.quorum,
      storeTimeoutMs: options.storeTimeoutMs,
      onMissing: (name) => this.startup.recover(this.admin, name),
    });
  }

  /** This node's group and acquirer name. */
  get identity(): NodeIdentity {
    return { group: this.options.holder.group, acquirer: this.options.holder.acquirer };
  }

  /** The id of this running instance: what owns its permits (unique per process and application context). */
  get instanceId(): string {
    return this.options.holder.instance;
  }

  /**
   * Connects, loads definitions into the cluster and checks every `@ClusterSingleton`; with
   * `connectInBackground`, starts doing so and returns at once (every permit is denied until it is done).
   */
  async onModuleInit(): Promise<void> {
    if (!this.options.connectInBackground) return this.start();
    this.logger.log(messages.connectingInBackground(this.target()));
    this.starting = this.start().catch((error: unknown) => {
      if (this.phase === 'starting') this.logger.error(messages.backgroundStartFailed(error));
    });
  }

  /** @internal The background start, for tests and shutdown: settles once connected (or given up). */
  get started(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  private async start(): Promise<void> {
    const stopWaiting = this.reportWaiting();
    try {
      await this.store.connect({
        clock: this.options.clock,
        events: {
          disconnected: () => this.noteAvailability(false, 'connection lost'),
          reconnected: () => this.noteAvailability(true),
          entriesLost: (names) => this.startup.recoverAll(this.admin, names),
          corruptValue: (key, reason) => this.reportCorrupt(key, reason),
        },
      });
    } finally {
      stopWaiting();
    }
    this.logger.log(messages.connected(this.store.constructor.name, this.options.holder));
    try {
      if (this.phase !== 'starting') throw new Error('shut down while starting');
      await this.startup.start(this.admin);
    } catch (error) {
      // A failed boot must not leave a client running that keeps the process alive.
      this.engine.dispose();
      this.startup.stop();
      await this.store.close().catch(() => undefined);
      throw error;
    }
    if (this.phase !== 'starting') return; // shut down meanwhile
    this.phase = 'ready';
    if (this.options.stateDumpIntervalMs) {
      this.dumpTimer = setInterval(() => void this.dumpState(), this.options.stateDumpIntervalMs);
      this.dumpTimer.unref();
    }
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
    const timer = setInterval(() => this.logger.warn(messages.stillConnecting(target, Date.now() - started, timeoutMs)), WAITING_REPORT_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Logs one line per semaphore (holders, expiries, tokens, denials here since the last dump). */
  async dumpState(): Promise<void> {
    try {
      const now = this.options.clock.now();
      for (const status of await this.permits()) {
        this.logger.log(`state ${messages.stateLine(status, now, this.deniedSinceDump.get(status.name) ?? 0)}`);
      }
      this.deniedSinceDump.clear();
    } catch (error) {
      this.logger.warn(`state dump failed: ${(error as Error).message}`);
    }
  }

  /** Shutdown begins: no new runs from here on (ticks may still fire until schedules stop). */
  onModuleDestroy(): void {
    // A background start still under way must never turn 'ready' (and start jobs) once shutdown began.
    if (this.phase === 'ready' || this.phase === 'starting') this.phase = 'draining';
    clearInterval(this.dumpTimer);
  }

  /** Waits for running jobs and decisions in flight, up to `shutdownTimeout`, while leases keep permits alive. */
  async beforeApplicationShutdown(): Promise<void> {
    const drained = await Promise.race([
      this.local.idle().then(() => true),
      sleep(this.options.shutdownTimeoutMs, false, { ref: false }),
    ]);
    if (!drained) this.logger.warn(messages.shutdownRunning(this.local.leases.size));
  }

  /**
   * Releases the permits of finished work (a job still running keeps its permit until it expires) and
   * disconnects. Decisions still in flight are waited for first (each has a deadline): a grant that lands after
   * the release would otherwise be held, or run, while another node holds the permit.
   */
  async onApplicationShutdown(): Promise<void> {
    this.phase = 'closed';
    await this.local.decisionsSettled();
    const busy = new Set([...this.local.leases].map((lease) => lease.permit.fencingToken));
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
    // A background start still waiting for the cluster gives up once the store is closed (its last probe within
    // a few seconds); shutdown does not wait for it.
    await this.store.close();
  }

  /**
   * Grants a permit of `semaphore`, or refreshes the one this instance holds; otherwise says why not. Never
   * throws for a denial. With `local: true` it may answer from this node's view without a round trip (a denial,
   * or `outcome: 'held'` for its own permit with more than half its duration left); `@ClusterSingleton` ticks do
   * this. While other work in this process uses the permit (a run, `withPermit`, `acquire`), denies `IN_USE`.
   */
  async tryAcquire(semaphore: string, options: DecideOptions = {}): Promise<AcquireResult> {
    validateSemaphoreName(semaphore);
    if (this.phase !== 'ready') return this.notReady(semaphore);
    if (this.local.isClaimed(semaphore)) return this.inUse(semaphore);
    return this.noted(await this.local.decision(this.engine.tryAcquire(semaphore, options)));
  }

  /**
   * Like {@link tryAcquire}, but keeps trying until granted; throws {@link PermitTimeoutError} after `timeout`.
   * The permit is this caller's alone in this process until {@link release}d: runs and `withPermit` of the same
   * semaphore are denied `IN_USE` meanwhile.
   */
  async acquire(semaphore: string, { timeout = '30s', pollInterval }: AcquireOptions = {}): Promise<Permit> {
    const timeoutMs = parseDuration(timeout, semaphore, 'timeout', { allowZero: true });
    const pollMs = pollInterval === undefined
      ? Math.min(1000, Math.max(50, Math.floor(timeoutMs / 10)))
      : parseDuration(pollInterval, semaphore, 'pollInterval');
    const deadline = this.options.clock.now() + timeoutMs;
    for (;;) {
      const key = this.local.claim(validateSemaphoreName(semaphore));
      const result = key ? await this.decideClaimed(semaphore, {}) : this.inUse(semaphore);
      if (result.granted) {
        this.manualClaims.set(claimKey(result.permit), key!);
        return result.permit;
      }
      if (key) this.local.unclaim(semaphore, key);
      const left = deadline - this.options.clock.now();
      if (left <= 0) throw new PermitTimeoutError(semaphore, timeoutMs, result.reason);
      await sleep(Math.min(pollMs, left));
    }
  }

  /** Refreshes exactly this permit (same fencing token); denies with `PERMIT_LOST` when it is no longer held. */
  async refresh(permit: Permit, options: DecideOptions = {}): Promise<AcquireResult> {
    if (this.phase !== 'ready' && this.phase !== 'draining') return this.notReady(permit.semaphore);
    return this.noted(await this.local.decision(this.engine.refresh(permit, options)));
  }

  /** Releases a permit this instance holds. Throws {@link PermitNotHeldError} if it does not hold it (any more). */
  async release(permit: Permit): Promise<void> {
    const key = this.manualClaims.get(claimKey(permit));
    try {
      const outcome = permit.instance === this.instanceId ? await this.engine.release(permit) : 'not-held';
      if (outcome === 'not-held') throw new PermitNotHeldError(permit.semaphore, permit.fencingToken, this.identity.acquirer);
    } finally {
      if (key) {
        this.manualClaims.delete(claimKey(permit));
        this.local.unclaim(permit.semaphore, key);
      }
    }
  }

  /**
   * Runs `fn` only if a permit is granted, keeps the permit alive while it runs (up to `maxRunTime`) and releases
   * it afterwards. Inside `fn`, {@link currentPermit} and {@link currentLease} return it. While `fn` runs, the
   * permit is its alone in this process too: concurrent calls are denied `IN_USE`.
   */
  async withPermit<T>(semaphore: string, fn: (lease: PermitLease) => T | Promise<T>, options: WithPermitOptions = {}): Promise<WithPermitResult<T>> {
    const maxRunTimeMs = options.maxRunTime === undefined ? undefined : parseDuration(options.maxRunTime, semaphore, 'maxRunTime');
    const outcome = await this.runExclusive(semaphore, fn, {
      keepAlive: options.keepAlive,
      maxRunTimeMs,
      releaseAfter: { lockAtLeastForMs: 0 },
    });
    return outcome.ran ? { ran: true, value: outcome.value, permit: outcome.permit } : outcome;
  }

  /** The permit of the job running in the current async context (decorated method or `withPermit`), if any. */
  currentPermit(): Permit | undefined {
    return permitContext.getStore()?.permit;
  }

  /** The lease of the running job: its permit, an `AbortSignal` that fires if the permit is lost, and `assertValid()`. */
  currentLease(): PermitLease | undefined {
    return permitContext.getStore();
  }

  /**
   * @internal One run under the semaphore's permit: claim it in this process, decide, start only on a permit
   * valid for a quarter of its duration or more, keep it alive while `fn` runs, and release it after if asked.
   */
  async runExclusive<T>(semaphore: string, fn: (lease: PermitLease) => T | Promise<T>, options: RunOptions = {}): Promise<RunOutcome<T>> {
    validateSemaphoreName(semaphore);
    if (this.phase !== 'ready') return { ran: false, denied: this.notReady(semaphore) };
    const key = this.local.claim(semaphore);
    if (!key) return { ran: false, denied: this.inUse(semaphore) };
    let lease: PermitLease | undefined;
    try {
      const result = await this.decideClaimed(semaphore, { local: options.local });
      if (!result.granted) return { ran: false, denied: result };
      // Decided while ready, but shutdown may have begun meanwhile: never start then (the release follows).
      if (this.phase !== 'ready') return { ran: false, denied: this.notReady(semaphore) };
      const { permit } = result;
      const left = permit.expiresAt - this.options.clockSkewMs - this.options.clock.now();
      const margin = Math.floor((permit.expiresAt - permit.refreshedAt) / 4);
      if (left < margin) {
        return { ran: false, denied: { granted: false, semaphore, reason: DenyReason.PERMIT_LOST, message: messages.tooLate(left, margin) } };
      }
      // News that arrived with (or just before) the grant's answer, before anyone watched: judge it now.
      const news = this.engine.newsAgainst(permit);
      if (news) return { ran: false, denied: news };
      lease = new PermitLease(permit, (p) => this.refresh(p, { local: true }), (p, onLost) => this.engine.watch(p, onLost), this.options.clock, {
        keepAlive: options.keepAlive,
        clockSkewMs: this.options.clockSkewMs,
        maxRunTimeMs: options.maxRunTimeMs,
      });
      this.local.leases.add(lease);
      const running = lease;
      const value = await this.local.run(permitContext.run(running, async () => fn(running)));
      return { ran: true, value, permit, outcome: result.outcome };
    } finally {
      if (lease) {
        lease.end();
        this.local.leases.delete(lease);
        if (options.releaseAfter) await this.releaseQuietly(lease.permit, lease.permit.grantedAt + options.releaseAfter.lockAtLeastForMs);
      }
      this.local.unclaim(semaphore, key);
    }
  }

  /**
   * @internal Releases after a run, never throwing: a permit that cannot be released simply expires. Returns
   * whether it was released by this call.
   */
  async releaseQuietly(permit: Permit, notBefore = 0): Promise<boolean> {
    try {
      return (await this.engine.release(permit, notBefore)) === 'released';
    } catch (error) {
      this.logger.warn(messages.releaseFailed(permit.semaphore, error));
      return false;
    }
  }

  /** Every definition this node knows, sorted by name (its view of the cluster, kept current by events). */
  listDefinitions(): SemaphoreDefinition[] {
    return this.admin.list();
  }

  /** The definition with this name as this node knows it, if any. */
  getDefinition(name: string): SemaphoreDefinition | undefined {
    return this.store.peek(name)?.entry?.definition ?? undefined;
  }

  /** The definition as stored in the cluster now. Throws {@link UnknownSemaphoreError} if there is none. */
  readDefinition(name: string): Promise<SemaphoreDefinition> {
    return this.admin.get(name);
  }

  /** Creates or replaces a definition, cluster-wide. Validated first: a bad one throws {@link InvalidDefinitionError} and nothing is stored. */
  putDefinition(input: SemaphoreDefinitionInput): Promise<SemaphoreDefinition> {
    return this.admin.put(input);
  }

  /** Changes some fields of an existing definition by compare-and-set on what the cluster holds now. */
  updateDefinition(name: string, patch: SemaphoreDefinitionPatch): Promise<SemaphoreDefinition> {
    return this.admin.update(name, patch);
  }

  /** Removes a definition; returns whether it existed. Live permits then lapse at their holders' next refresh. */
  removeDefinition(name: string): Promise<boolean> {
    return this.admin.remove(name);
  }

  /** Pauses a semaphore everywhere (permits to 0); the holder stops at its next refresh. */
  pause(name: string): Promise<SemaphoreDefinition> {
    return this.admin.pause(name);
  }

  /** Resumes a paused semaphore with the permits it had (or `permits`). */
  resume(name: string, permits?: number): Promise<SemaphoreDefinition> {
    return this.admin.resume(name, permits);
  }

  /**
   * Moves the semaphores whose group pattern lists `fromGroup` (a plain list of group names, never a `.*`) to
   * `toGroup`; `dryRun` only reports. See {@link migrateGroups} for selection, wildcards and the full report.
   */
  migrate(fromGroup: string, toGroup: string, options: { dryRun?: boolean } = {}): Promise<MigrationChange[]> {
    return this.admin.migrate(fromGroup, toGroup, options);
  }

  /**
   * A group migration with every choice: which semaphores (names, a name pattern), wildcard patterns too or not,
   * a dry run. Reports each change (pattern before and after), what it skipped and why, and a warning when no
   * live node is known in the target group. Each definition remembers what it replaced, for {@link undoMigration}.
   */
  migrateGroups(request: GroupMigrationRequest): Promise<GroupMigrationReport> {
    return this.admin.migrateGroups(request);
  }

  /** Puts back the group patterns the last migration of each selected semaphore replaced, unless edited since. */
  undoMigration(request?: UndoMigrationRequest): Promise<UndoMigrationReport> {
    return this.admin.undoMigration(request);
  }

  /** Every semaphore with its definition, live permits (holder, group, expiry, fencing token) and last token. */
  permits(): Promise<SemaphoreStatus[]> {
    return this.admin.permits();
  }

  /**
   * Operator action: takes the permit with this fencing token away, whoever holds it; returns whether there was
   * one. Its holder is told first (its job's signal fires); nobody else gets it until the holder let go or it expired.
   */
  forceRelease(semaphore: string, fencingToken: number): Promise<boolean> {
    return this.admin.forceRelease(semaphore, fencingToken);
  }

  /** @internal The live permits of `semaphore` on any node, as this node's view has them (no round trip). */
  viewedPermits(semaphore: string): Permit[] {
    const entry = this.store.peek(semaphore)?.entry;
    return entry ? livePermits(entry.permits, this.options.clock.now()) : [];
  }

  /** @internal The last fencing token granted for `semaphore` as this node's view has it (0 if none). */
  viewedLastToken(semaphore: string): number {
    return this.store.peek(semaphore)?.entry?.lastToken ?? 0;
  }

  /** @internal Now, on the module's clock. */
  now(): number {
    return this.options.clock.now();
  }

  /** The permits this instance holds. */
  heldPermits(): Permit[] {
    return this.engine.heldPermits();
  }

  /**
   * Operator repair: takes every permit of `semaphore` away (as {@link forceRelease} does) and rebuilds an
   * unreadable entry, waiting out every permit it could have held before granting again. Tokens keep growing.
   */
  async resetPermits(semaphore: string): Promise<void> {
    await this.admin.resetPermits(semaphore, {
      graceDurationMs: this.startup.knownDurationMs(semaphore),
      definition: this.startup.knownDefinition(semaphore),
    });
    this.reportedCorrupt.delete(semaphore);
  }

  private async decideClaimed(semaphore: string, options: DecideOptions): Promise<AcquireResult> {
    if (this.phase !== 'ready') return this.notReady(semaphore);
    return this.noted(await this.local.decision(this.engine.tryAcquire(semaphore, options)));
  }

  private notReady(semaphore: string): PermitDenied {
    return { granted: false, semaphore, reason: DenyReason.NOT_READY, message: `gatekeeper is ${this.phase}` };
  }

  private inUse(semaphore: string): PermitDenied {
    return { granted: false, semaphore, reason: DenyReason.IN_USE, message: 'another run in this process uses the permit' };
  }

  private noted(result: AcquireResult): AcquireResult {
    if (!result.granted && this.options.stateDumpIntervalMs) {
      this.deniedSinceDump.set(result.semaphore, (this.deniedSinceDump.get(result.semaphore) ?? 0) + 1);
    }
    const unreachable = !result.granted && (result.reason === DenyReason.STORE_UNAVAILABLE || result.reason === DenyReason.STORE_TIMEOUT);
    if (unreachable) this.noteAvailability(false, result.message);
    else this.noteAvailability(true);
    if (!result.granted && result.reason === DenyReason.CORRUPT_STATE) this.reportCorrupt(result.semaphore, result.message);
    return result;
  }

  /** Logs the transitions only, not every denied tick. */
  private noteAvailability(available: boolean, detail = ''): void {
    if (available === !this.unavailable) return;
    this.unavailable = !available;
    if (available) this.logger.log(messages.available());
    else this.logger.warn(messages.unavailable(detail));
  }

  private reportCorrupt(key: string, reason: string): void {
    if (this.reportedCorrupt.has(key)) return;
    this.reportedCorrupt.add(key);
    this.logger.error(messages.corruptValue(key, reason));
  }
}

function claimKey(permit: Permit): string {
  return `${permit.semaphore}\u0000${permit.fencingToken}`;
}
