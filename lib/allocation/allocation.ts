import type { DurationInput } from '../core/duration';
import { ALLOCATION_SEMAPHORE_PREFIX } from '../permits/semaphore-kind';

// Defined with the other kinds of semaphore, which the permit layer tells apart (operator tools, migrations).
export { ALLOCATION_SEMAPHORE_PREFIX };

/** The most characters of an allocation's name: its semaphore's (`allocation:<name>`) fits with room to spare. */
export const MAX_ALLOCATION_NAME_LENGTH = 180;

/** The lease of an allocation that does not set one. */
export const DEFAULT_ALLOCATION_LEASE = '10s';

/** How long an allocation that does not set one waits before a rebalance (see {@link AllocationInput.rebalanceDelay}). */
export const DEFAULT_REBALANCE_DELAY = '3s';

/** How many nodes may take part in an allocation that does not say (its semaphore's permits). */
export const DEFAULT_ALLOCATION_PARTICIPANTS = 1000;

/**
 * An allocation as users declare it (module option `allocations`): a set of resources (queue ids, shard ids,
 * tenant ids) spread evenly over the live nodes that take part. Stored as the semaphore `allocation:<name>`, so
 * operators pause it and edit who takes part with the tools they use for permits.
 */
export interface AllocationInput {
  /** The allocation's name, e.g. `'queues'`. */
  name: string;
  /**
   * How long a node's ownership lasts unless renewed (renewed in the background). A crashed node's resources move
   * after this plus twice the clock-skew bound. Default `'10s'`.
   */
  lease?: DurationInput;
  /** Regex (full match) a node's group must match to take part. Default any group. */
  groupPattern?: string;
  /** Regex (full match) a node's acquirer name must match to take part. Default any acquirer. */
  acquirerPattern?: string;
  /** How many nodes may take part at most (the rest stand by). `0` pauses the allocation. Default 1000. */
  maxParticipants?: number;
  /**
   * How long a joining node waits before resources move to it (joins within it are rebalanced at once), and how
   * long a node that stops gracefully keeps its resources reserved for its acquirer name (capped at the lease),
   * so a restart within it moves nothing. Default `'3s'`.
   */
  rebalanceDelay?: DurationInput;
  /**
   * Manual mode (no coordination, nothing stored in the cluster): this node takes slice `nodeIndex` of `nodeCount`
   * of the sorted set. Every index must run on exactly one node; nothing checks it. The patterns, lease and delay
   * do not apply.
   */
  manual?: { nodeCount: number; nodeIndex: number };
}

/** Why a rebalance happened. */
export type RebalanceReason = 'initial' | 'joined' | 'left' | 'resources-changed' | 'requested';

/**
 * The target assignment of an allocation, written by its coordinator (its oldest participant) into the
 * semaphore's entry. Nodes move resources towards it: an owner gives a resource up (after its `onRevoked`) before
 * its new owner can take it.
 */
export interface AllocationPlan {
  /** Grows by one with every plan. */
  readonly generation: number;
  /** When it was written (epoch ms, the coordinator's clock). */
  readonly at: number;
  /** The coordinator's acquirer name. */
  readonly by: string;
  /** Why. */
  readonly reason: RebalanceReason;
  /** For people: who joined or left, what changed in the set. */
  readonly detail: string;
  /** The resource set it spreads, sorted. */
  readonly resources: readonly string[];
  /** Acquirer name → its resources, sorted. */
  readonly targets: Readonly<Record<string, readonly string[]>>;
  /** How many resources it gives to another node than the last plan did (a leaver's included; new resources not). */
  readonly moved: number;
  /** The rebalance requests it answers (see `AllocationAnnex.requests`). */
  readonly answered: number;
}

/** What an allocation keeps in its semaphore's entry besides the permits. */
export interface AllocationAnnex {
  /** The current plan, once a coordinator wrote one. */
  readonly plan?: AllocationPlan;
  /** Rebalances asked for (manual, or a resource set changed on a node that does not coordinate): a counter. */
  readonly requests: number;
}

/** The semaphore that backs the allocation `name`. */
export function allocationSemaphore(name: string): string {
  return `${ALLOCATION_SEMAPHORE_PREFIX}${name}`;
}

/** The allocation a semaphore backs, or `undefined` for any other semaphore. */
export function allocationOf(semaphore: string): string | undefined {
  return semaphore.startsWith(ALLOCATION_SEMAPHORE_PREFIX) ? semaphore.slice(ALLOCATION_SEMAPHORE_PREFIX.length) : undefined;
}
