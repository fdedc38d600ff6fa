import { Injectable } from '@nestjs/common';
import type { ResourceLease } from '../../allocation/allocation-lease';
import type { AllocationHandlers } from '../../allocation/allocation-participant.options';
import type { AllocationStatus } from '../../allocation/allocation-status';
import { AllocationRuntime } from './allocation.runtime';

/**
 * Spreads resource sets (queue ids, shard ids, tenant ids) evenly over the live nodes (seed 003, dalloc, without its
 * flaws): each node says what the set is and what to do with its share; every node ends with ⌊R/N⌋ or ⌈R/N⌉, a
 * join moves only what evenness needs, a leave moves only the leaver's, and a resource moves only after its old
 * owner's `onRevoked` returned (or its lease provably lapsed), so no resource ever has two owners at once.
 *
 * @example
 * ```ts
 * onModuleInit() {
 *   this.allocations.participate('queues', {
 *     resources: () => this.queues.ids(),
 *     onAssigned: (ids, lease) => this.consumers.start(ids, lease),
 *     onRevoked: (ids) => this.consumers.stop(ids),
 *   });
 * }
 * ```
 */
@Injectable()
export class AllocationService {
  /** @internal Nest injects the service; applications never construct it. */
  constructor(private readonly runtime: AllocationRuntime) {}

  /**
   * Takes part in allocation `name` (declared in the module options, or defined with the defaults): `resources()`
   * returns the whole set (re-read every 30 s, or when told by {@link AllocationService.resourcesChanged}); `onAssigned` gets this
   * node's new resources with the lease (`lease.epochOf(id)` fences writes); `onRevoked` must stop using the
   * resources it gets before it returns. Call it once per allocation, e.g. in `onModuleInit`.
   */
  participate(name: string, handlers: AllocationHandlers): void {
    this.runtime.parts.participate(name, handlers);
  }

  /** The resources this node owns in `name` now (sorted). */
  owned(name: string): string[] {
    return this.runtime.parts.owned(name);
  }

  /** This node's part in `name` while it takes part: its resources with their epochs, and the signal. */
  lease(name: string): ResourceLease | undefined {
    return this.runtime.parts.lease(name);
  }

  /** Who owns what in `name`, the skew, and the last rebalance (when, why, how many moved), from this node's view. */
  status(name: string): AllocationStatus {
    return this.runtime.parts.status(name);
  }

  /** Asks for a rebalance of `name` now (the coordinator re-reads the resource set). */
  rebalance(name: string): Promise<void> {
    return this.runtime.parts.rebalance(name);
  }

  /** Says the resource set of `name` changed, so it is re-read now rather than at the next interval. */
  resourcesChanged(name: string): Promise<void> {
    return this.runtime.parts.resourcesChanged(name);
  }
}
