import type { Clock } from '../core/clock';
import { parseDuration } from '../core/duration';
import { nameProblem } from '../core/names';
import { claimDedicated, ensureDefined } from '../permits/dedicated-semaphore';
import type { PermitClaim, PermitDecisions } from '../permits/permit-decisions';
import type { Holder } from '../permits/permit';
import type { PermitStore } from '../permits/permit-store';
import type { SemaphoreAdmin } from '../permits/semaphore-admin';
import { allocationSemaphore, DEFAULT_REBALANCE_DELAY, MAX_ALLOCATION_NAME_LENGTH, type AllocationPlan } from './allocation';
import { requestRebalance } from './allocation-admin';
import { resolveAllocation, type ResolvedAllocation } from './allocation-definition';
import type { ResourceLease } from './allocation-lease';
import { AllocationParticipant } from './allocation-participant';
import type { AllocationHandlers } from './allocation-participant.options';
import type { AllocationPermits } from './allocation-permits';
import { allocationStatus, type AllocationStatus } from './allocation-status';
import { ManualAllocation, type ManualSlot } from './manual-allocation';
import { unknownAllocation } from './errors/allocation.errors';
import { invalidOption } from '../core/errors/input.errors';

/** What {@link AllocationParts} stands on, and where it reports. */
export interface AllocationPartsOptions {
  readonly holder: Holder;
  readonly clock: Clock;
  readonly clockSkewMs: number;
  readonly storeTimeoutMs: number;
  /** The allocations the module options declare, by name. */
  readonly declared: ReadonlyMap<string, ResolvedAllocation>;
  /** Whether an allocation nobody defined is defined with the defaults. */
  readonly autoDefine: boolean;
  readonly store: PermitStore;
  readonly permits: AllocationPermits;
  readonly admin: Pick<SemaphoreAdmin, 'get' | 'define'>;
  readonly local: Pick<PermitDecisions, 'claim' | 'unclaim'>;
  /** The error for a participation asked for while stopping. */
  shuttingDown(name: string): Error;
  /** Told of every hand-over, before the app's handler runs. */
  onAssigned(name: string, resources: string[]): void;
  onRevoked(name: string, resources: string[], reason: string): void;
  readonly log: { log(message: string): void; warn(message: string): void; error(message: string): void };
}

/** One allocation this node takes part in, coordinated through the cluster. */
interface Part {
  readonly participant: AllocationParticipant;
  /** The claim on the allocation's semaphore in this process (so no other use of it here can release it). */
  readonly claim: PermitClaim;
}

/**
 * This node's parts in allocations: one {@link AllocationParticipant} each (or a {@link ManualAllocation} slice in
 * manual mode), registered at any time, started with the module and stopped gracefully (work told, resources
 * reserved for this node's name) before permits are released at shutdown.
 */
export class AllocationParts {
  private readonly handlers = new Map<string, AllocationHandlers>();
  private readonly parts = new Map<string, Part>();
  private readonly manual = new Map<string, ManualAllocation>();
  private phase: 'idle' | 'started' | 'stopped' = 'idle';
  private stopping?: Promise<void>;

  constructor(private readonly options: AllocationPartsOptions) {}

  /** Fencing tokens of parts left to lapse (their `onRevoked` overran): never released at shutdown. */
  keptTokens(): number[] {
    return [...this.parts.values()].flatMap((part) => part.participant.keptTokens());
  }

  /** Registers this node's part in `name` (once per allocation); it starts with the others, or at once once started. */
  participate(name: string, handlers: AllocationHandlers): void {
    const problem = nameProblem(name, { max: MAX_ALLOCATION_NAME_LENGTH });
    if (problem !== undefined) throw invalidOption('allocation', `name ${problem}`);
    if (typeof handlers?.resources !== 'function') throw invalidOption(`allocation "${name}".resources`, 'must be a function returning the resource set');
    if (this.handlers.has(name)) throw invalidOption(`allocation "${name}"`, 'this node already takes part in it (one participation per allocation per node)');
    if (this.phase === 'stopped') throw this.options.shuttingDown(name);
    this.handlers.set(name, handlers);
    if (this.phase === 'started') void this.join(name).catch((error: unknown) => this.options.log.error(`Allocation "${name}": ${(error as Error).message}`));
  }

  /** Starts every registered part. */
  async start(): Promise<void> {
    if (this.phase !== 'idle') return;
    this.phase = 'started';
    for (const name of this.handlers.keys()) await this.join(name);
  }

  /** Stops every part gracefully (each waits for its `onRevoked`, bounded by the revoke timeout); idempotent. */
  stop(): Promise<void> {
    this.phase = 'stopped';
    this.stopping ??= (async () => {
      await Promise.allSettled([...this.parts.values()].map((part) => part.participant.stop()));
      await Promise.allSettled([...this.manual.values()].map((slice) => slice.stop()));
      for (const [name, part] of this.parts) this.options.local.unclaim(allocationSemaphore(name), part.claim);
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
    return allocationStatus(semaphore, this.options.store.peek(semaphore)?.entry, this.options.clock.now(), this.options.clockSkewMs);
  }

  /** Asks for a rebalance of `name` (from this node's part, or as an operator's edit if it takes no part). */
  async rebalance(name: string): Promise<void> {
    const participant = this.parts.get(name)?.participant;
    if (participant && (await participant.requestRebalance())) return;
    await requestRebalance(this.options.store, name, this.options.storeTimeoutMs);
  }

  /** Says the resource set of `name` changed: re-read now (by the coordinator, asked by this node if need be). */
  async resourcesChanged(name: string): Promise<void> {
    const slice = this.manual.get(name);
    if (slice) return slice.refresh();
    const participant = this.parts.get(name)?.participant;
    if (participant) await participant.resourcesChanged();
    else await requestRebalance(this.options.store, name, this.options.storeTimeoutMs);
  }

  private async join(name: string): Promise<void> {
    const { declared, log } = this.options;
    const manual = declared.get(name)?.manual;
    if (manual) return this.slice(name, manual);
    const semaphore = allocationSemaphore(name);
    const dedicated = { kind: 'allocation', name, semaphore } as const;
    const definition = await ensureDefined(dedicated, {
      declared: declared.get(name)?.definition,
      viewed: this.options.store.peek(semaphore)?.entry?.definition,
      admin: this.options.admin,
      autoDefine: this.options.autoDefine,
      defaults: () => resolveAllocation({ name }).definition,
      unknown: () => unknownAllocation(name),
      onDefined: (message) => log.log(message),
    });
    if (this.phase !== 'started' || this.parts.has(name)) return;
    const claim = claimDedicated(this.options.local, dedicated);
    const delayMs = declared.get(name)?.delayMs ?? parseDuration(DEFAULT_REBALANCE_DELAY, semaphore, 'rebalanceDelay');
    const participant = new AllocationParticipant(name, this.options.holder, this.options.permits, this.reported(name, this.handlers.get(name)!), {
      clock: this.options.clock,
      clockSkewMs: this.options.clockSkewMs,
      delayMs,
      onPlan: (plan) => log.log(planLine(name, plan)),
      onJoined: (lease) => log.log(`Allocation "${name}": taking part (token ${lease.token}, lease ${definition.durationMs} ms)`),
      onLost: (reason) => log.warn(`Allocation "${name}": this node's part ended: ${reason}`),
      onError: (error, what) => log.warn(`Allocation "${name}": ${what} failed: ${(error as Error).message}`),
    });
    this.parts.set(name, { participant, claim });
    participant.start();
  }

  /** Manual mode: this node's slice of the sorted set, with no coordination. */
  private slice(name: string, slot: ManualSlot): void {
    if (this.phase !== 'started' || this.manual.has(name)) return;
    const { log } = this.options;
    const slice = new ManualAllocation(name, this.reported(name, this.handlers.get(name)!), {
      ...slot,
      onError: (error, what) => log.warn(`Allocation "${name}": ${what} failed: ${(error as Error).message}`),
    });
    this.manual.set(name, slice);
    log.log(`Allocation "${name}": manual mode, slice ${slot.nodeIndex} of ${slot.nodeCount}`);
    slice.start();
  }

  /** The app's handlers, with a log line and a report for every hand-over. */
  private reported(name: string, handlers: AllocationHandlers): AllocationHandlers {
    const { log } = this.options;
    return {
      resources: () => handlers.resources(),
      onAssigned: async (resources, lease) => {
        log.log(`Allocation "${name}": assigned ${describe(resources)}; owns ${lease.resources().length}`);
        this.options.onAssigned(name, resources);
        await handlers.onAssigned?.(resources, lease);
      },
      onRevoked: async (resources, reason) => {
        log.log(`Allocation "${name}": revoking ${describe(resources)} (${reason})`);
        this.options.onRevoked(name, resources, reason);
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
