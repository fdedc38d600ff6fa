import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDuration } from '../../core/duration';
import type { AcquireResult, PermitDenied } from '../../permits/acquire-result';
import { validateSemaphoreName } from '../../permits/definition.validator';
import { PermitNotHeldError } from '../../permits/errors/permit-not-held.error';
import { PermitTimeoutError } from '../../permits/errors/permit-timeout.error';
import type { NodeIdentity, Permit } from '../../permits/permit';
import type { DecideOptions } from '../../permits/permit-engine.options';
import type { PermitLease } from '../../permits/permit-lease';
import type { PermitStore } from '../../permits/permit-store';
import type { SemaphoreDefinitionPatch } from '../../permits/semaphore-admin';
import type { GroupMigrationReport, MigrationChange, UndoMigrationReport } from '../../permits/group-migrations';
import type { GroupMigrationRequest, UndoMigrationRequest } from '../../permits/group-migration.rules';
import type { DurationInput, SemaphoreDefinition, SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import type { SemaphoreStatus } from '../../permits/semaphore-status';
import type { KindGuardOptions } from '../../permits/semaphore-kind';
import { ExclusiveRuns } from './exclusive-runs';
import { inUse } from '../../permits/permit-executor';
import { GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../gatekeeper.options';
import { PermitsStartup } from './permits.startup';
import { permitContext } from './permit-context';
import { PermitsRuntime } from './permits.runtime';
import { GatekeeperEvents, type GatekeeperEvent } from '../signals/gatekeeper-events';
import type { Observable } from 'rxjs';

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

/**
 * The gatekeeper's API for your code: permits by hand, the permit of the running job, definitions (validated,
 * applied cluster-wide by compare-and-set) and the state of every permit. (Connecting at start-up and releasing
 * at shutdown are the module's own work: see `PermitsRuntime`.)
 */
@Injectable()
export class GatekeeperService {
  /** Claims taken by acquire(), given back by release(). */
  private readonly manualClaims = new Map<string, symbol>();

  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly startup: PermitsStartup,
    private readonly runtime: PermitsRuntime,
    private readonly runs: ExclusiveRuns,
    private readonly lifecycleEvents: GatekeeperEvents,
  ) {}

  /**
   * Every lifecycle change on this node as it happens: permits granted, refreshed, lost, denied; jobs started,
   * finished, failed; leaders elected, lost; resources assigned, revoked; tasks claimed, completed, failed, invalid,
   * and groups finished. The same events go through `@nestjs/event-emitter` when the app imports its module
   * (`@OnEvent('gatekeeper.permit.lost')`).
   */
  get events(): Observable<GatekeeperEvent> {
    return this.lifecycleEvents.stream;
  }

  /** This node's group and acquirer name. */
  get identity(): NodeIdentity {
    return { group: this.options.holder.group, acquirer: this.options.holder.acquirer };
  }

  /** The id of this running instance: what owns its permits (unique per process and application context). */
  get instanceId(): string {
    return this.options.holder.instance;
  }

  /** Logs one line per semaphore now (holders, expiries, tokens, denials here since the last dump), as `stateDumpInterval` does. */
  dumpState(): Promise<void> {
    return this.runtime.dumpState();
  }

  /**
   * Grants a permit of `semaphore`, or refreshes the one this instance holds; otherwise says why not. Never
   * throws for a denial. With `local: true` it may answer from this node's view without a round trip (a denial,
   * or `outcome: 'held'` for its own permit with more than half its duration left); `@ClusterSingleton` ticks do
   * this. While other work in this process uses the permit (a run, `withPermit`, `acquire`), denies `IN_USE`.
   */
  async tryAcquire(semaphore: string, options: DecideOptions = {}): Promise<AcquireResult> {
    validateSemaphoreName(semaphore);
    if (this.runtime.phase !== 'ready') return this.runtime.notReady(semaphore);
    if (this.runtime.local.isClaimed(semaphore)) return inUse(semaphore);
    return this.runtime.decide(semaphore, options);
  }

  /**
   * Like {@link GatekeeperService.tryAcquire}, but keeps trying until granted; throws {@link PermitTimeoutError} after `timeout`.
   * The permit is this caller's alone in this process until {@link GatekeeperService.release}d: runs and `withPermit` of the same
   * semaphore are denied `IN_USE` meanwhile.
   */
  async acquire(semaphore: string, { timeout = '30s', pollInterval }: AcquireOptions = {}): Promise<Permit> {
    const timeoutMs = parseDuration(timeout, semaphore, 'timeout', { allowZero: true });
    const pollMs = pollInterval === undefined
      ? Math.min(1000, Math.max(50, Math.floor(timeoutMs / 10)))
      : parseDuration(pollInterval, semaphore, 'pollInterval');
    const deadline = this.options.clock.now() + timeoutMs;
    for (;;) {
      const key = this.runtime.local.claim(validateSemaphoreName(semaphore));
      const result = key ? await this.runtime.decide(semaphore, {}) : inUse(semaphore);
      if (result.granted) {
        this.manualClaims.set(claimKey(result.permit), key!);
        return result.permit;
      }
      if (key) this.runtime.local.unclaim(semaphore, key);
      const left = deadline - this.options.clock.now();
      if (left <= 0) throw new PermitTimeoutError(semaphore, timeoutMs, result.reason);
      await sleep(Math.min(pollMs, left));
    }
  }

  /** Refreshes exactly this permit (same fencing token); denies with `PERMIT_LOST` when it is no longer held. */
  async refresh(permit: Permit, options: DecideOptions = {}): Promise<AcquireResult> {
    return this.runtime.refresh(permit, options);
  }

  /** Releases a permit this instance holds. Throws {@link PermitNotHeldError} if it does not hold it (any more). */
  async release(permit: Permit): Promise<void> {
    const key = this.manualClaims.get(claimKey(permit));
    try {
      const outcome = permit.instance === this.instanceId ? await this.runtime.engine.release(permit) : 'not-held';
      if (outcome === 'not-held') throw new PermitNotHeldError(permit.semaphore, permit.fencingToken, this.identity.acquirer);
    } finally {
      if (key) {
        this.manualClaims.delete(claimKey(permit));
        this.runtime.local.unclaim(permit.semaphore, key);
      }
    }
  }

  /**
   * Runs `fn` only if a permit is granted, keeps the permit alive while it runs (up to `maxRunTime`) and releases
   * it afterwards. Inside `fn`, {@link GatekeeperService.currentPermit} and {@link GatekeeperService.currentLease} return it. While `fn` runs, the
   * permit is its alone in this process too: concurrent calls are denied `IN_USE`.
   */
  async withPermit<T>(semaphore: string, fn: (lease: PermitLease) => T | Promise<T>, options: WithPermitOptions = {}): Promise<WithPermitResult<T>> {
    const maxRunTimeMs = options.maxRunTime === undefined ? undefined : parseDuration(options.maxRunTime, semaphore, 'maxRunTime');
    const outcome = await this.runs.run(semaphore, fn, {
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

  /** Every definition this node knows, sorted by name (its view of the cluster, kept current by events). */
  listDefinitions(): SemaphoreDefinition[] {
    return this.runtime.admin.list();
  }

  /** The definition with this name as this node knows it, if any. */
  getDefinition(name: string): SemaphoreDefinition | undefined {
    return this.store.peek(name)?.entry?.definition ?? undefined;
  }

  /** The definition as stored in the cluster now. Throws {@link UnknownSemaphoreError} if there is none. */
  readDefinition(name: string): Promise<SemaphoreDefinition> {
    return this.runtime.admin.get(name);
  }

  /**
   * Creates or replaces a definition, cluster-wide. Validated first: a bad one throws {@link InvalidDefinitionError}
   * and nothing is stored. Creating an election's or allocation's semaphore, or changing its permits, needs
   * `{ force: true }`.
   */
  putDefinition(input: SemaphoreDefinitionInput, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.put(input, options);
  }

  /**
   * Changes some fields of an existing definition by compare-and-set on what the cluster holds now. The permits of
   * an election's or allocation's semaphore only with `{ force: true }`.
   */
  updateDefinition(name: string, patch: SemaphoreDefinitionPatch, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.update(name, patch, options);
  }

  /** Removes a definition; returns whether it existed. Live permits then lapse at their holders' next refresh. */
  removeDefinition(name: string): Promise<boolean> {
    return this.runtime.admin.remove(name);
  }

  /**
   * Pauses a semaphore everywhere (permits to 0); the holder stops at its next refresh. An election's or
   * allocation's semaphore (`election:leader`) only with `{ force: true }`: it is refused with
   * {@link InvalidDefinitionError} otherwise, since a job's tools should not stop a leader or an allocation by accident.
   */
  pause(name: string, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.pause(name, options);
  }

  /** Resumes a paused semaphore with the permits it had (or `permits`); an election's or allocation's with `{ force: true }`. */
  resume(name: string, permits?: number, options?: KindGuardOptions): Promise<SemaphoreDefinition> {
    return this.runtime.admin.resume(name, permits, options);
  }

  /**
   * Moves the semaphores whose group pattern lists `fromGroup` (a plain list of group names, never a `.*`) to
   * `toGroup`; `dryRun` only reports. See {@link GatekeeperService.migrateGroups} for selection, wildcards and the full report.
   */
  migrate(fromGroup: string, toGroup: string, options: { dryRun?: boolean } = {}): Promise<MigrationChange[]> {
    return this.runtime.admin.migrate(fromGroup, toGroup, options);
  }

  /**
   * A group migration with every choice: which semaphores (names, a name pattern), wildcard patterns too or not,
   * a dry run. Reports each change (pattern before and after), what it skipped and why, and a warning when no
   * live node is known in the target group. Each definition remembers what it replaced, for {@link GatekeeperService.undoMigration}.
   */
  migrateGroups(request: GroupMigrationRequest): Promise<GroupMigrationReport> {
    return this.runtime.admin.migrateGroups(request);
  }

  /** Puts back the group patterns the last migration of each selected semaphore replaced, unless edited since. */
  undoMigration(request?: UndoMigrationRequest): Promise<UndoMigrationReport> {
    return this.runtime.admin.undoMigration(request);
  }

  /** Every semaphore with its definition, live permits (holder, group, expiry, fencing token) and last token. */
  permits(): Promise<SemaphoreStatus[]> {
    return this.runtime.admin.permits();
  }

  /**
   * Operator action: takes the permit with this fencing token away, whoever holds it; returns whether there was
   * one. Its holder is told first (its job's signal fires); nobody else gets it until the holder let go or it expired.
   */
  forceRelease(semaphore: string, fencingToken: number): Promise<boolean> {
    return this.runtime.admin.forceRelease(semaphore, fencingToken);
  }

  /** The permits this instance holds. */
  heldPermits(): Permit[] {
    return this.runtime.engine.heldPermits();
  }

  /**
   * Operator repair: takes every permit of `semaphore` away (as {@link GatekeeperService.forceRelease} does) and rebuilds an
   * unreadable entry, waiting out every permit it could have held before granting again. Tokens keep growing.
   */
  async resetPermits(semaphore: string): Promise<void> {
    await this.runtime.admin.resetPermits(semaphore, {
      graceDurationMs: this.startup.knownDurationMs(semaphore),
      definition: this.startup.knownDefinition(semaphore),
    });
    this.runtime.notices.forgetCorrupt(semaphore);
  }
}

function claimKey(permit: Permit): string {
  return `${permit.semaphore}\u0000${permit.fencingToken}`;
}
