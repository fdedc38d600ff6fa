import type { Clock } from '../core/clock';
import type { AllocationPlan } from './allocation';
import type { AllocationLease, ResourceLease } from './allocation-lease';

/** What a node brings to an allocation: the resource set, and what to do with its share. */
export interface AllocationHandlers {
  /** The whole resource set (every node should return the same; the coordinator's is what counts). */
  resources(): readonly string[] | Promise<readonly string[]>;
  /** Resources given to this node, once its permit lists them. `lease.epochOf(id)` fences writes. */
  onAssigned?(resources: string[], lease: ResourceLease): void | Promise<void>;
  /**
   * Resources taken from this node: stop using them before returning. They move to another node only after this
   * returned (or, if it does not return within the revoke timeout, once this node's lease lapsed).
   */
  onRevoked?(resources: string[], reason: string): void | Promise<void>;
}

/** Timing and hooks of an {@link AllocationParticipant}. */
export interface AllocationParticipantOptions {
  clock: Clock;
  /** The clock-skew bound. */
  clockSkewMs: number;
  /** The rebalance delay (see `AllocationInput.rebalanceDelay`). */
  delayMs: number;
  /** How often the coordinator re-reads the resource set. Default 30 s. */
  resourcesIntervalMs?: number;
  /** How long `onRevoked` may take; past it the node lets its lease lapse instead. Default: the lease. */
  revokeTimeoutMs?: number;
  /** Called when this node's coordinator wrote a plan. */
  onPlan?(plan: AllocationPlan): void;
  /** Called when this node starts or stops taking part. */
  onJoined?(lease: AllocationLease): void;
  /** Called when this node's part ended without a graceful stop. */
  onLost?(reason: string): void;
  /** Called when something failed and is retried (a store call, a handler). */
  onError?(error: unknown, what: string): void;
}
