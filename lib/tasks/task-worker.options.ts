import type { Clock } from '../core/clock';
import type { TaskRecord } from '../store/tasks/task';
import type { TaskEvent } from './task-events';

/** Timing and hooks of a {@link TaskWorker}. */
export interface TaskWorkerOptions {
  /** Where time is read (claims, leases, backoff, retention). */
  clock: Clock;
  /** The clock-skew bound: another node's claim counts as live until its expiry plus this. */
  clockSkewMs: number;
  /** How long a finished task's id is remembered (a submit of it is ignored meanwhile). Default 24 h. */
  retentionMs?: number;
  /**
   * Handlers run at once by this node. Default 4. A handler that ended frees its slot while its outcome is written;
   * one whose lease was lost (it ignored its abort signal) no longer holds its task, nor its slot.
   */
  concurrency?: number;
  /** How often it looks for work without being told (new work is signalled; this finds abandoned tasks). Default 5 s. */
  scanMs?: number;
  /** How often it removes tasks finished longer than the retention window ago. Default 1 min; 0: never. */
  purgeMs?: number;
  /** Called for a task that ended invalid (default: nothing but the state and the count in its group). */
  onInvalid?(task: TaskRecord, error: string): void;
  /** Called when something failed and is retried. */
  onError?(error: unknown, what: string): void;
  /** Called when the store answered a query for claimable tasks (after failures: it answers again). */
  onHealthy?(): void;
  /** Hears every claim and every run's end on this node (see {@link TaskEvent}). Must not throw. */
  onEvent?(event: TaskEvent): void;
}

/** How long a finished task's id is remembered: the option, or 24 h. */
export function retentionOf(options: TaskWorkerOptions): number {
  return options.retentionMs ?? 24 * 3_600_000;
}
