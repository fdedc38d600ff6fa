import type { AllocationHandlers } from './allocation-participant.options';
import type { ResourceLease } from './allocation-lease';
import { manualSlice } from './allocation-plan.rules';
import { resourceNotOwned } from './errors/allocation.errors';

/** Where a node sits in a manual allocation. */
export interface ManualSlot {
  /** How many nodes there are (fixed by configuration). */
  readonly nodeCount: number;
  /** This node's index, 0 to `nodeCount - 1`. */
  readonly nodeIndex: number;
}

/** Options of a {@link ManualAllocation}. */
export interface ManualAllocationOptions extends ManualSlot {
  /** How often the resource set is re-read. Default 30 s. */
  resourcesIntervalMs?: number;
  /** Called when reading the set or a handler failed (it is retried at the next read). */
  onError?(error: unknown, what: string): void;
}

/**
 * Manual mode (dalloc's "low-tech" allocation): no coordination at all. The node sorts the resource set and takes
 * slice `nodeIndex` of `nodeCount`; the slices of indexes 0..nodeCount-1 cover the set exactly once, sizes within
 * one of each other. Nothing checks that two nodes were not given the same index or that every index runs: that
 * is the configuration's job. Same callbacks as the coordinated mode (revoke before assign); epochs are 0.
 */
export class ManualAllocation {
  private readonly owned = new Set<string>();
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private reading?: Promise<void>;
  private again = false;
  private running = false;
  readonly lease: ResourceLease;

  constructor(
    /** The allocation's name. */
    readonly allocation: string,
    private readonly handlers: AllocationHandlers,
    private readonly options: ManualAllocationOptions,
  ) {
    const owned = this.owned;
    const signal = this.controller.signal;
    this.lease = {
      allocation,
      signal,
      resources: () => [...owned].sort(),
      owns: (id) => owned.has(id) && !signal.aborted,
      epochOf: (id) => (owned.has(id) && !signal.aborted ? 0 : undefined),
      assertOwned: (id) => {
        if (!owned.has(id) || signal.aborted) throw resourceNotOwned(allocation, id, 'not in this node\'s slice');
      },
    };
  }

  /** Starts: takes its slice now, then re-reads the set every interval. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.resourcesIntervalMs ?? 30_000);
    this.timer.unref();
  }

  /** The resources this node owns now. */
  resources(): string[] {
    return this.lease.resources();
  }

  /** Re-reads the set now (and again after a read in progress). */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.again && this.running) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  /** Stops: the signal fires and `onRevoked` gets everything it owned. */
  async stop(reason = 'this node is shutting down'): Promise<void> {
    this.running = false;
    clearInterval(this.timer);
    await this.reading;
    this.controller.abort(new Error(reason));
    const all = [...this.owned].sort();
    this.owned.clear();
    if (all.length) await this.call('onRevoked', () => this.handlers.onRevoked?.(all, reason));
  }

  private async read(): Promise<void> {
    if (!this.running) return;
    let set: readonly string[];
    try {
      set = await this.handlers.resources();
      if (!Array.isArray(set) || set.some((id) => typeof id !== 'string')) throw new TypeError(`resources() of "${this.allocation}" must return an array of strings`);
    } catch (error) {
      this.options.onError?.(error, 'resources()');
      return;
    }
    const slice = new Set(manualSlice(set, this.options.nodeCount, this.options.nodeIndex));
    const revoked = [...this.owned].filter((id) => !slice.has(id)).sort();
    const assigned = [...slice].filter((id) => !this.owned.has(id)).sort();
    if (revoked.length) {
      for (const id of revoked) this.owned.delete(id);
      await this.call('onRevoked', () => this.handlers.onRevoked?.(revoked, 'no longer in this node\'s slice'));
    }
    if (assigned.length && this.running) {
      for (const id of assigned) this.owned.add(id);
      await this.call('onAssigned', () => this.handlers.onAssigned?.(assigned, this.lease));
    }
  }

  private async call(what: string, handler: () => unknown): Promise<void> {
    try {
      await handler();
    } catch (error) {
      this.options.onError?.(error, what);
    }
  }
}
