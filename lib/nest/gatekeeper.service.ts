import {
  Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleDestroy, type OnModuleInit,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcquireResult, PermitDenied } from '../engine/acquire-result';
import { SemaphoreAdmin, type MigrationChange, type SemaphoreDefinitionPatch } from '../admin/semaphore-admin';
import { formatStateLine } from '../admin/state-dump.format';
import { PermitEngine, type DecideOptions } from '../engine/permit.engine';
import type { SemaphoreStatus } from '../engine/semaphore-status';
import { PermitLease } from '../engine/permit-lease';
import { PermitNotHeldError } from '../errors/permit-not-held.error';
import { PermitTimeoutError } from '../errors/permit-timeout.error';
import { UnknownSemaphoreError } from '../errors/unknown-semaphore.error';
import { InvalidDefinitionError } from '../errors/invalid-definition.error';
import { validateDefinition, validateSemaphoreName } from '../gatekeeper/definition.validator';
import { DenyReason } from '../gatekeeper/deny-reason';
import { parseDuration } from '../gatekeeper/duration';
import type { NodeIdentity, Permit } from '../gatekeeper/permit';
import type { DurationInput, SemaphoreDefinition, SemaphoreDefinitionInput } from '../gatekeeper/semaphore-definition';
import type { PermitStore } from '../store/permit-store';
import { ClusterSingletonExplorer } from './cluster-singleton.explorer';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from './gatekeeper.constants';
import { messages } from './gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { permitContext } from './permit-context';

/** Options of {@link GatekeeperService.acquire}. */
export interface AcquireOptions {
  /** How long to keep trying. Default `'30s'`. */
  timeout?: DurationInput;
  /** Pause between attempts. Default: a tenth of the timeout, between 50 ms and 1 s. */
  pollInterval?: DurationInput;
}

/** The result of {@link GatekeeperService.withPermit}: the function ran under a permit, or the permit was denied. */
export type WithPermitResult<T> = { ran: true; value: T; permit: Permit } | { ran: false; denied: PermitDenied };


/**
 * The gatekeeper's API for your code: permits by hand, the permit of the running job, definitions (validated,
 * applied cluster-wide at once) and the state of every permit. Connects on module init; on shutdown waits for
 * running jobs, releases this node's permits and disconnects.
 */
@Injectable()
export class GatekeeperService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly engine: PermitEngine;
  private readonly admin: SemaphoreAdmin;
  private readonly leases = new Set<PermitLease>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly autoDefined: SemaphoreDefinition[] = [];
  private readonly reportedCorrupt = new Set<string>();
  private readonly deniedSinceDump = new Map<string, number>();
  private dumpTimer?: NodeJS.Timeout;
  /** `draining`: shutting down, no new permits, but running jobs keep theirs alive until they finish. */
  private phase: 'starting' | 'ready' | 'draining' | 'closed' = 'starting';
  private unavailable = false;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly explorer: ClusterSingletonExplorer,
  ) {
    this.engine = new PermitEngine(store, options.identity, options.clock, {
      clockSkewMs: options.clockSkewMs,
      quorum: options.quorum,
    });
    this.admin = new SemaphoreAdmin(store, options.clock);
  }

  /** This node's group and acquirer name. */
  get identity(): NodeIdentity {
    return this.options.identity;
  }

  /** @internal Connects, loads definitions into the cluster and checks every `@ClusterSingleton`. */
  async onModuleInit(): Promise<void> {
    await this.store.connect({
      disconnected: () => this.noteAvailability(false, 'connection lost'),
      reconnected: (fresh) => this.onReconnected(fresh),
      corruptValue: (key, reason) => this.reportCorrupt(key, reason),
    });
    this.logger.log(messages.connected(this.store.constructor.name, this.identity.group, this.identity.acquirer));
    try {
      await this.publish(this.options.definitions, this.options.definitionsPolicy === 'keep');
      await this.defineDecoratedSemaphores();
    } catch (error) {
      // A failed boot must not leave a client running that keeps the process alive.
      await this.store.close().catch(() => undefined);
      throw error;
    }
    this.phase = 'ready';
    for (const definition of this.store.listDefinitions()) {
      if (definition.durationMs <= 2 * this.options.clockSkewMs) {
        this.logger.warn(messages.durationBelowSkew(definition.name, definition.durationMs, this.options.clockSkewMs));
      }
    }
    if (this.options.stateDumpIntervalMs) {
      this.dumpTimer = setInterval(() => void this.dumpState(), this.options.stateDumpIntervalMs);
      this.dumpTimer.unref();
    }
  }

  /** Logs one line per semaphore (holders, expiries, tokens, denials here since the last dump). */
  async dumpState(): Promise<void> {
    try {
      const now = this.options.clock.now();
      for (const status of await this.permits()) {
        this.logger.log(`state ${formatStateLine(status, now, this.deniedSinceDump.get(status.name) ?? 0)}`);
      }
      this.deniedSinceDump.clear();
    } catch (error) {
      this.logger.warn(`state dump failed: ${(error as Error).message}`);
    }
  }

  /** @internal Shutdown begins: no new permits from here on (ticks may still fire until schedules stop). */
  onModuleDestroy(): void {
    if (this.phase === 'ready') this.phase = 'draining';
    clearInterval(this.dumpTimer);
  }

  /** @internal Waits for running jobs, up to `shutdownTimeout`, while their leases keep their permits alive. */
  async beforeApplicationShutdown(): Promise<void> {
    const drained = await Promise.race([
      Promise.allSettled([...this.running]).then(() => true),
      sleep(this.options.shutdownTimeoutMs, false, { ref: false }),
    ]);
    if (!drained) this.logger.warn(messages.shutdownRunning(this.leases.size));
  }

  /** @internal Releases the permits of finished work (a job still running keeps its permit until it expires) and disconnects. */
  async onApplicationShutdown(): Promise<void> {
    const busy = new Set([...this.leases].map((lease) => lease.permit.fencingToken));
    this.phase = 'closed';
    for (const lease of this.leases) lease.end('this node is shutting down');
    for (const permit of this.engine.heldPermits()) {
      if (!busy.has(permit.fencingToken)) await this.releaseQuietly(permit);
    }
    await this.store.close();
  }

  /**
   * Grants a permit of `semaphore`, or refreshes the one this node holds; otherwise says why not. Never throws for
   * a denial. With `local: true` it may answer from this node's event-fed view without a round trip: a denial, or
   * `outcome: 'held'` for its own permit with more than half its duration left. `@ClusterSingleton` ticks do this.
   */
  async tryAcquire(semaphore: string, options: DecideOptions = {}): Promise<AcquireResult> {
    validateSemaphoreName(semaphore);
    if (this.phase !== 'ready') {
      return this.notReady(semaphore);
    }
    return this.noted(await this.engine.tryAcquire(semaphore, options));
  }

  /** Like {@link tryAcquire}, but keeps trying until granted; throws {@link PermitTimeoutError} after `timeout`. */
  async acquire(semaphore: string, { timeout = '30s', pollInterval }: AcquireOptions = {}): Promise<Permit> {
    const timeoutMs = parseDuration(timeout, semaphore, 'timeout', { allowZero: true });
    const pollMs = pollInterval === undefined
      ? Math.min(1000, Math.max(50, Math.floor(timeoutMs / 10)))
      : parseDuration(pollInterval, semaphore, 'pollInterval');
    const deadline = this.options.clock.now() + timeoutMs;
    for (;;) {
      const result = await this.tryAcquire(semaphore);
      if (result.granted) return result.permit;
      const left = deadline - this.options.clock.now();
      if (left <= 0) throw new PermitTimeoutError(semaphore, timeoutMs, result.reason);
      await sleep(Math.min(pollMs, left));
    }
  }

  /** Refreshes exactly this permit (same fencing token); denies with `PERMIT_LOST` when it is no longer held. */
  async refresh(permit: Permit, options: DecideOptions = {}): Promise<AcquireResult> {
    if (this.phase !== 'ready' && this.phase !== 'draining') {
      return this.notReady(permit.semaphore);
    }
    return this.noted(await this.engine.refresh(permit, options));
  }

  /** Releases a permit this node holds. Throws {@link PermitNotHeldError} if it does not hold it (any more). */
  async release(permit: Permit): Promise<void> {
    const outcome = permit.acquirer === this.identity.acquirer ? await this.engine.release(permit) : 'not-held';
    if (outcome === 'not-held') throw new PermitNotHeldError(permit.semaphore, permit.fencingToken, this.identity.acquirer);
  }

  /**
   * Runs `fn` only if a permit is granted, keeps the permit alive while it runs and releases it afterwards.
   * Inside `fn`, {@link currentPermit} and {@link currentLease} return it.
   */
  async withPermit<T>(semaphore: string, fn: (lease: PermitLease) => T | Promise<T>): Promise<WithPermitResult<T>> {
    const result = await this.tryAcquire(semaphore);
    if (!result.granted) return { ran: false, denied: result };
    try {
      const value = await this.runUnderPermit(result.permit, fn);
      return { ran: true, value, permit: result.permit };
    } finally {
      await this.releaseQuietly(result.permit);
    }
  }

  /** The permit of the job running in the current async context (decorated method or `withPermit`), if any. */
  currentPermit(): Permit | undefined {
    return permitContext.getStore()?.permit;
  }

  /** The lease of the running job: its permit, an `AbortSignal` that fires if the permit is lost, and `assertValid()`. */
  currentLease(): PermitLease | undefined {
    return permitContext.getStore();
  }

  /** @internal Runs `fn` under `permit`: keeps it alive, exposes it through async context, tracks it for shutdown. */
  async runUnderPermit<T>(permit: Permit, fn: (lease: PermitLease) => T | Promise<T>, keepAlive = true): Promise<T> {
    const lease = new PermitLease(permit, (p) => this.refresh(p, { local: true }), this.options.clock, {
      keepAlive,
      clockSkewMs: this.options.clockSkewMs,
    });
    this.leases.add(lease);
    const run = permitContext.run(lease, async () => fn(lease));
    this.running.add(run);
    try {
      return await run;
    } finally {
      lease.end();
      this.leases.delete(lease);
      this.running.delete(run);
    }
  }

  /**
   * @internal Releases after a run, never throwing: a permit that cannot be released simply expires. A permit
   * another run on this node still uses (same semaphore, same acquirer, so the same permit) is left alone.
   */
  async releaseQuietly(permit: Permit, notBefore = 0): Promise<void> {
    const inUse = [...this.leases].some(
      (lease) => lease.permit.semaphore === permit.semaphore && lease.permit.fencingToken === permit.fencingToken,
    );
    if (inUse) return;
    try {
      await this.engine.release(permit, notBefore);
    } catch (error) {
      this.logger.warn(messages.releaseFailed(permit.semaphore, error));
    }
  }

  /** Every definition, sorted by name (from the local cache the store keeps current). */
  listDefinitions(): SemaphoreDefinition[] {
    return this.admin.list();
  }

  /** The definition with this name, if any (from the local cache). */
  getDefinition(name: string): SemaphoreDefinition | undefined {
    return this.store.getDefinition(name);
  }

  /** The definition as stored in the cluster now. Throws {@link UnknownSemaphoreError} if there is none. */
  readDefinition(name: string): Promise<SemaphoreDefinition> {
    return this.admin.get(name);
  }

  /** Creates or replaces a definition, cluster-wide. Validated first: a bad one throws {@link InvalidDefinitionError} and nothing is stored. */
  putDefinition(input: SemaphoreDefinitionInput): Promise<SemaphoreDefinition> {
    return this.admin.put(input);
  }

  /**
   * Changes some fields of an existing definition, read from the cluster (not the local cache, which may not have
   * seen an edit made a moment ago on another node). Throws {@link UnknownSemaphoreError} if there is none.
   */
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

  /** Moves every semaphore whose group pattern admits `fromGroup` to `toGroup`; `dryRun` only reports. */
  migrate(fromGroup: string, toGroup: string, options: { dryRun?: boolean } = {}): Promise<MigrationChange[]> {
    return this.admin.migrate(fromGroup, toGroup, options);
  }

  /** Every semaphore with its definition, live permits (holder, group, expiry, fencing token) and last token. */
  permits(): Promise<SemaphoreStatus[]> {
    return this.admin.permits();
  }

  /** Operator action: removes the permit with this fencing token, whoever holds it. Returns whether there was one. */
  forceRelease(semaphore: string, fencingToken: number): Promise<boolean> {
    return this.admin.forceRelease(semaphore, fencingToken);
  }

  /** The permits this node holds. */
  heldPermits(): Permit[] {
    return this.engine.heldPermits();
  }

  /**
   * Operator repair: drops every permit of `semaphore` (e.g. a value written by hand that nodes cannot read).
   * Fencing tokens restart from the clock's milliseconds, so they still only grow.
   */
  async resetPermits(semaphore: string): Promise<void> {
    await this.admin.resetPermits(semaphore);
    this.reportedCorrupt.delete(semaphore);
  }

  private async publish(definitions: SemaphoreDefinition[], ifAbsent: boolean): Promise<void> {
    for (const definition of definitions) await this.store.saveDefinition(definition, { ifAbsent });
  }

  private async defineDecoratedSemaphores(): Promise<void> {
    for (const { where, options } of this.explorer.discover()) {
      // The cache may not have a definition another node wrote a moment ago: ask the cluster before deciding.
      if (this.store.getDefinition(options.semaphore) || (await this.store.readDefinition(options.semaphore))) continue;
      if (!this.options.autoDefine) throw new UnknownSemaphoreError(options.semaphore, where);
      if (options.durationMs === undefined) {
        throw new InvalidDefinitionError(options.semaphore, 'duration', messages.missingDuration(where));
      }
      const definition = validateDefinition({ name: options.semaphore, permits: 1, duration: options.durationMs });
      if (await this.store.saveDefinition(definition, { ifAbsent: true })) {
        this.logger.log(messages.autoDefined(definition.name, where, definition.durationMs));
      }
      this.autoDefined.push(definition);
    }
  }

  private async onReconnected(freshCluster: boolean): Promise<void> {
    if (freshCluster) {
      // A full cluster restart loses every map: put back what this node knows, without overwriting what
      // another node may already have restored.
      await this.publish([...this.options.definitions, ...this.autoDefined], true);
      this.logger.log(messages.republished(this.options.definitions.length + this.autoDefined.length));
    }
    this.noteAvailability(true);
  }

  private notReady(semaphore: string): AcquireResult {
    return { granted: false, semaphore, reason: DenyReason.NOT_READY, message: `gatekeeper is ${this.phase}` };
  }

  private noted(result: AcquireResult): AcquireResult {
    if (!result.granted) this.deniedSinceDump.set(result.semaphore, (this.deniedSinceDump.get(result.semaphore) ?? 0) + 1);
    if (!result.granted && result.reason === DenyReason.STORE_UNAVAILABLE) this.noteAvailability(false, result.message);
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
