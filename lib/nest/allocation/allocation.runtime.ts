import { ShuttingDownError } from '../errors/shutting-down.error';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { parseDuration } from '../../core/duration';
import { allocationSemaphore, DEFAULT_REBALANCE_DELAY, MAX_ALLOCATION_NAME_LENGTH, type AllocationPlan } from '../../allocation/allocation';
import { requestRebalance } from '../../allocation/allocation-admin';
import { resolveAllocation } from '../../allocation/allocation-definition';
import type { ResourceLease } from '../../allocation/allocation-lease';
import { ManualAllocation, type ManualSlot } from '../../allocation/manual-allocation';
import { AllocationParticipant } from '../../allocation/allocation-participant';
import { type AllocationHandlers } from '../../allocation/allocation-participant.options';
import { type AllocationPermits } from '../../allocation/allocation-permits';
import { allocationStatus, type AllocationStatus } from '../../allocation/allocation-status';
import { nameProblem } from '../../core/names';
import type { PermitStore } from '../../permits/permit-store';
import type { SemaphoreDefinition } from '../../permits/semaphore-definition';
import type { CapabilityRuntime } from '../capability.runtime';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { GatekeeperEvents } from '../signals/gatekeeper-events';
import { unknownAllocation } from '../../allocation/errors/allocation.errors';
import { invalidOption } from '../../core/errors/input.errors';

/** One allocation this node takes part in, coordinated through the cluster. */
interface Part {
  readonly participant: AllocationParticipant;
  /** The claim on the allocation's semaphore in this process (so no other use of it here can release it). */
  readonly claim: symbol;
}

/**
 * The allocations this node takes part in: one {@link AllocationParticipant} each, on the module's permit engine,
 * started once the module is ready and stopped gracefully (work told, resources reserved for this node's name)
 * before permits are released at shutdown. `AllocationService` serves it to applications.
 * Used inside the module, not by applications.
 */
@Injectable()
export class AllocationRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly handlers = new Map<string, AllocationHandlers>();
  private readonly parts = new Map<string, Part>();
  private readonly manual = new Map<string, ManualAllocation>();
  private phase: 'idle' | 'started' | 'stopped' = 'idle';
  private stopping?: Promise<void>;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly runtime: PermitsRuntime,
    private readonly events: GatekeeperEvents,
  ) {
    // Parts whose onRevoked overran: their resources stay listed until the permit lapses, so it is never released.
    runtime.keepAtStop(() => [...this.parts.values()].flatMap((part) => part.participant.keptTokens()));
  }

  /** Registers this node's part in `name` (once per allocation); it starts when the module is ready, or at once. */
  participate(name: string, handlers: AllocationHandlers): void {
    const problem = nameProblem(name, { max: MAX_ALLOCATION_NAME_LENGTH });
    if (problem !== undefined) throw invalidOption('allocation', `name ${problem}`);
    if (typeof handlers?.resources !== 'function') throw invalidOption(`allocation "${name}".resources`, 'must be a function returning the resource set');
    if (this.handlers.has(name)) throw invalidOption(`allocation "${name}"`, 'this node already takes part in it (one participation per allocation per node)');
    if (this.phase === 'stopped') throw new ShuttingDownError(`Allocation "${name}"`);
    this.handlers.set(name, handlers);
    if (this.phase === 'started') {
      void this.join(name).catch((error: unknown) => this.logger.error(`Allocation "${name}": ${(error as Error).message}`));
    }
  }

  /** Starts every registered part. Called by the module once it is ready. */
  async start(): Promise<void> {
    if (this.phase !== 'idle') return;
    this.phase = 'started';
    for (const name of this.handlers.keys()) await this.join(name);
  }

  /** Stops every part gracefully (each waits for its `onRevoked`, bounded by the revoke timeout). */
  drain(): Promise<void> {
    return this.stop();
  }

  /** Stops every part (see {@link drain}); idempotent. */
  stop(): Promise<void> {
    this.phase = 'stopped';
    this.stopping ??= (async () => {
      await Promise.allSettled([...this.parts.values()].map((part) => part.participant.stop()));
      await Promise.allSettled([...this.manual.values()].map((slice) => slice.stop()));
      for (const [name, part] of this.parts) this.runtime.local.unclaim(allocationSemaphore(name), part.claim);
    })();
    return this.stopping;
  }

  /** This node's part in `name` while it takes part. */
  lease(name: string): ResourceLease | undefined {
    return this.parts.get(name)?.participant.lease ?? this.manual.get(name)?.lease;
  }

  /** The resources this node owns in `name` now. */
  owned(name: string): string[] {
    return this.parts.get(name)?.participant.owned() ?? this.manual.get(name)?.resources() ?? [];
  }

  /** Who owns what in `name`, from this node's view (no round trip). */
  status(name: string): AllocationStatus {
    const semaphore = allocationSemaphore(name);
    return allocationStatus(semaphore, this.store.peek(semaphore)?.entry, this.options.permitClock.now(), this.options.clockSkewMs);
  }

  /** Asks for a rebalance of `name` (from this node's part, or as an operator's edit if it takes no part). */
  async rebalance(name: string): Promise<void> {
    const participant = this.parts.get(name)?.participant;
    if (participant && (await participant.requestRebalance())) return;
    await requestRebalance(this.store, name, this.options.storeTimeoutMs);
  }

  /** Says the resource set of `name` changed: re-read now (by the coordinator, asked by this node if need be). */
  async resourcesChanged(name: string): Promise<void> {
    const slice = this.manual.get(name);
    if (slice) return slice.refresh();
    const participant = this.parts.get(name)?.participant;
    if (participant) await participant.resourcesChanged();
    else await requestRebalance(this.store, name, this.options.storeTimeoutMs);
  }

  private async join(name: string): Promise<void> {
    const manual = this.options.allocations.get(name)?.manual;
    if (manual) return this.slice(name, manual);
    const semaphore = allocationSemaphore(name);
    const definition = await this.ensureDefined(name, semaphore);
    if (this.phase !== 'started' || this.parts.has(name)) return;
    const claim = this.runtime.local.claim(semaphore);
    if (!claim) throw invalidOption(`allocation "${name}"`, `its semaphore "${semaphore}" is in use by other work in this process`, semaphore);
    const delayMs = this.options.allocations.get(name)?.delayMs ?? parseDuration(DEFAULT_REBALANCE_DELAY, semaphore, 'rebalanceDelay');
    const participant = new AllocationParticipant(name, this.options.holder, this.permits(), this.logged(name, this.handlers.get(name)!), {
      clock: this.options.permitClock,
      clockSkewMs: this.options.clockSkewMs,
      delayMs,
      onPlan: (plan) => this.logger.log(planLine(name, plan)),
      onJoined: (lease) => this.logger.log(`Allocation "${name}": taking part (token ${lease.token}, lease ${definition.durationMs} ms)`),
      onLost: (reason) => this.logger.warn(`Allocation "${name}": this node's part ended: ${reason}`),
      onError: (error, what) => this.logger.warn(`Allocation "${name}": ${what} failed: ${(error as Error).message}`),
    });
    this.parts.set(name, { participant, claim });
    participant.start();
  }

  /** Manual mode: this node's slice of the sorted set, with no coordination. */
  private slice(name: string, slot: ManualSlot): void {
    if (this.phase !== 'started' || this.manual.has(name)) return;
    const slice = new ManualAllocation(name, this.logged(name, this.handlers.get(name)!), {
      ...slot,
      onError: (error, what) => this.logger.warn(`Allocation "${name}": ${what} failed: ${(error as Error).message}`),
    });
    this.manual.set(name, slice);
    this.logger.log(`Allocation "${name}": manual mode, slice ${slot.nodeIndex} of ${slot.nodeCount}`);
    slice.start();
  }

  /** The allocation's definition: the module options', the cluster's, or a default one (autoDefine). */
  private async ensureDefined(name: string, semaphore: string): Promise<SemaphoreDefinition> {
    const declared = this.options.allocations.get(name);
    if (declared) return declared.definition; // published at start-up with the other definitions
    const existing = this.store.peek(semaphore)?.entry?.definition ?? (await this.runtime.admin.get(semaphore).catch(() => undefined));
    if (existing) return existing;
    if (!this.options.autoDefine) throw unknownAllocation(name);
    const { definition } = resolveAllocation({ name });
    if (await this.runtime.admin.define(definition)) this.logger.log(`Defined allocation "${name}" (${semaphore}, lease ${definition.durationMs} ms, any group)`);
    return definition;
  }

  private permits(): AllocationPermits {
    const { runtime, store } = this;
    return {
      acquire: (semaphore) => runtime.decide(semaphore, { local: true }),
      amend: (permit, change, options) => runtime.engine.amend(permit, change, options),
      release: async (permit, notBefore) => {
        await runtime.releaseQuietly(permit, notBefore);
      },
      watch: (permit, onLost) => runtime.engine.watch(permit, onLost, { withdraw: false }),
      peek: (semaphore) => store.peek(semaphore)?.entry,
      watchEntry: (semaphore, listener) => store.watch((entryName) => {
        if (entryName === semaphore) listener();
      }, (entryName) => entryName === semaphore),
    };
  }

  /** The user's handlers, with a log line for every hand-over. */
  private logged(name: string, handlers: AllocationHandlers): AllocationHandlers {
    return {
      resources: () => handlers.resources(),
      onAssigned: async (resources, lease) => {
        this.logger.log(`Allocation "${name}": assigned ${describe(resources)}; owns ${lease.resources().length}`);
        this.events.emit({ name: 'gatekeeper.resource.assigned', allocation: name, resources: [...resources] });
        await handlers.onAssigned?.(resources, lease);
      },
      onRevoked: async (resources, reason) => {
        this.logger.log(`Allocation "${name}": revoking ${describe(resources)} (${reason})`);
        this.events.emit({ name: 'gatekeeper.resource.revoked', allocation: name, resources: [...resources], reason: String(reason) });
        await handlers.onRevoked?.(resources, reason);
      },
    };
  }
}

function describe(resources: readonly string[]): string {
  const shown = resources.slice(0, 5).join(', ');
  return `${resources.length} resource(s): ${shown}${resources.length > 5 ? ', …' : ''}`;
}

function planLine(name: string, plan: AllocationPlan): string {
  const shares = Object.entries(plan.targets).map(([who, ids]) => `${who}=${ids.length}`).join(' ');
  const why = plan.reason === 'initial' ? `initial; ${plan.detail}` : plan.detail || plan.reason;
  return `Allocation "${name}": rebalance #${plan.generation} (${why}): ${plan.moved} to move; ${shares}`;
}
