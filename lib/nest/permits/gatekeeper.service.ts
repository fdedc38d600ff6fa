import { Inject, Injectable } from '@nestjs/common';
import { parseDuration } from '../../core/duration';
import type { AcquireResult } from '../../permits/acquire-result';
import { ManualPermits } from '../../permits/manual-permits';
import type { NodeIdentity, Permit } from '../../permits/permit';
import type { DecideOptions } from '../../permits/permit-engine.options';
import type { PermitLease } from '../../permits/permit-lease';
import type { DurationInput } from '../../permits/semaphore-definition';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { permitContext } from '../../permits/permit-context';
import { validateSemaphoreName } from '../../permits/definition.validator';
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
export type WithPermitResult<T> = { ran: true; value: T; permit: Permit } | { ran: false; denied: Extract<AcquireResult, { granted: false }> };

/**
 * The gatekeeper's API for your code: permits and leases. Take a permit by hand (`tryAcquire`, `acquire`, `refresh`,
 * `release`), run a function under one (`withPermit`), read the running job's permit and lease, the permits this
 * instance holds, its identity and its events. The operator's tools (definitions, migrations, force-release, reset,
 * the state of every permit) are {@link SemaphoreAdminService}'s. (Connecting at start-up and releasing at shutdown
 * are the module's own work: see `PermitsRuntime`.)
 *
 * @example
 * ```ts
 * @Injectable()
 * export class Reindex {
 *   constructor(private readonly gatekeeper: GatekeeperService) {}
 *
 *   async once(): Promise<void> {
 *     await this.gatekeeper.withPermit('reindex', async (lease) => {
 *       lease.assertValid(); // before each side effect
 *     });
 *   }
 * }
 * ```
 */
@Injectable()
export class GatekeeperService {
  /** Permits taken by hand: tryAcquire, acquire, release. */
  private readonly manual: ManualPermits;

  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    private readonly runtime: PermitsRuntime,
    private readonly lifecycleEvents: GatekeeperEvents,
  ) {
    this.manual = new ManualPermits(runtime.decisions, options.clock);
  }

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

  /**
   * Grants a permit of `semaphore`, or refreshes the one this instance holds; otherwise says why not. Never
   * throws for a denial. With `local: true` it may answer from this node's view without a round trip (a denial,
   * or `outcome: 'held'` for its own permit with more than half its duration left); `@ClusterSingleton` ticks do
   * this. While other work in this process uses the permit (a run, `withPermit`, `acquire`), denies `IN_USE`.
   */
  tryAcquire(semaphore: string, options: DecideOptions = {}): Promise<AcquireResult> {
    return this.manual.tryAcquire(semaphore, options);
  }

  /**
   * Like {@link GatekeeperService.tryAcquire}, but keeps trying until granted; throws a {@link WaitTimeoutError} (`kind: 'permit'`) after `timeout`.
   * The permit is this caller's alone in this process until {@link GatekeeperService.release}d: runs and `withPermit` of the same
   * semaphore are denied `IN_USE` meanwhile.
   */
  acquire(semaphore: string, options: AcquireOptions = {}): Promise<Permit> {
    return this.manual.acquire(semaphore, options);
  }

  /** Refreshes exactly this permit (same fencing token); denies with `PERMIT_LOST` when it is no longer held. */
  async refresh(permit: Permit, options: DecideOptions = {}): Promise<AcquireResult> {
    return this.runtime.refresh(permit, options);
  }

  /** Releases a permit this instance holds. Throws {@link PermitNotHeldError} if it does not hold it (any more). */
  release(permit: Permit): Promise<void> {
    return this.manual.release(permit);
  }

  /**
   * Runs `fn` only if a permit is granted, keeps the permit alive while it runs (up to `maxRunTime`) and releases
   * it afterwards. Inside `fn`, {@link GatekeeperService.currentPermit} and {@link GatekeeperService.currentLease} return it. While `fn` runs, the
   * permit is its alone in this process too: concurrent calls are denied `IN_USE`.
   */
  async withPermit<T>(semaphore: string, fn: (lease: PermitLease) => T | Promise<T>, options: WithPermitOptions = {}): Promise<WithPermitResult<T>> {
    const maxRunTimeMs = options.maxRunTime === undefined ? undefined : parseDuration(options.maxRunTime, semaphore, 'maxRunTime');
    validateSemaphoreName(semaphore);
    const outcome = await this.runtime.executor.run(semaphore, fn, {
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

  /** The permits this instance holds. */
  heldPermits(): Permit[] {
    return this.runtime.engine.heldPermits();
  }
}
