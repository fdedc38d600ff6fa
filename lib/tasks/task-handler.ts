import type { DurationInput } from '../permits/semaphore-definition';
import type { BackoffPolicy, GroupJoinData, TaskRecord } from '../store/tasks/task';
import { DEFAULT_MAX_ATTEMPTS } from './task-claim.rules';
import type { SubmitInput } from './task-submit.rules';
import { invalidTaskInput } from '../core/errors/input.errors';
import type { SqlTransaction } from '../store/sql-transaction';

/*
 * What a task handler is given and how it is run: the handler's contract, and a handler as the worker keeps it,
 * with its options resolved and checked once, when it is registered.
 */

/** What a handler gets besides the task's data. */
export interface TaskContext {
  /** The task as claimed. */
  readonly task: TaskRecord;
  /** The claim's fencing token: pass it to stores that can reject a stale worker's writes. */
  readonly epoch: number;
  /** Which attempt this is, from 1. */
  readonly attempt: number;
  /** When the lease lapses unless renewed (epoch ms, this node's clock); moves with every renewal. */
  readonly expiresAt: number;
  /** Fires when the lease is lost (not renewed in time, cancelled, taken over) or the node shuts down. */
  readonly signal: AbortSignal;
  /**
   * Renews the lease for `lease` from now (ms or `'5m'`; default: the handler's lease); throws
   * {@link LeaseLostError} once it was lost (the task is another node's now: stop).
   */
  renewLease(lease?: DurationInput): Promise<void>;
  /** Submits a sub-task: this task is its parent, and its group's join then triggers this task type's join. */
  submit(input: SubmitInput): Promise<TaskRecord>;
  /**
   * Completes the task (done, with `result`) inside your own database transaction, so the completion commits with
   * the handler's writes or not at all (PostgreSQL backend: a transaction on the database that holds its tasks, through
   * any executor of `nestjs-gatekeeper/fencing`). It is fenced by the claim's epoch: a handler whose claim was lost
   * (frozen, cut off, taken over by another node) is refused with `LeaseLostError` and its transaction fails, so none
   * of its writes commit, and the task runs again elsewhere; its effects land exactly once. Call it last in the
   * transaction and return once the transaction committed: the run then ends as that completion says (the handler's
   * return value is not used). If the transaction rolled back instead, the run counts as failed and is retried.
   * Until the transaction ends, the task's row is held by it and nobody claims the task: with `maxIdle`, the server
   * ends the transaction if it then sits idle that long (a handler frozen before its `COMMIT` commits nothing, and the
   * task runs again elsewhere; see `maxIdle` of `fence()` for the `'error'` event node-postgres emits then).
   *
   * @example
   * ```ts
   * await this.dataSource.transaction(async (manager) => {
   *   await manager.insert(Charge, { invoice: data.invoice });
   *   await context.completeIn(typeormExecutor(manager));
   * });
   * ```
   */
  completeIn(transaction: SqlTransaction, result?: unknown, options?: CompleteInOptions): Promise<void>;
}

/** Options of {@link TaskContext.completeIn}. */
export interface CompleteInOptions {
  /**
   * Once the completion is written, the server ends the transaction if it sits idle this long (ms or `'5s'`;
   * PostgreSQL's `idle_in_transaction_session_timeout`, for this transaction only). Off unless given.
   */
  readonly maxIdle?: DurationInput;
}

/** Runs a task of one type; its return value is the result. */
export type TaskHandler = (data: unknown, context: TaskContext) => unknown;
/** Runs the join of a group of one type, with every task's result or error. */
export type GroupFinishedHandler = (join: GroupJoinData, context: TaskContext) => unknown;

/** How a type's tasks are run. */
export interface TaskHandlerOptions {
  /** The lease of a claim: renew within it. Default 30 s. */
  leaseMs?: number;
  /** Attempts (failed, retried or lapsed) before a task fails for good, unless its submit named a number. Default 3. */
  maxAttempts?: number;
  /** Retry backoff. Default 1 s doubling up to 1 min. */
  backoff?: BackoffPolicy;
}

const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, factor: 2, maxMs: 60_000 };

/** A type's handler as registered on a worker, its options resolved. */
export interface Registration {
  readonly run: (data: unknown, context: TaskContext) => unknown;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
}

/** Resolves a handler's options with their defaults; throws naming the field when its lease cannot work. */
export function registration(type: string, run: Registration['run'], options: TaskHandlerOptions, clockSkewMs: number): Registration {
  const leaseMs = options.leaseMs ?? 30_000;
  if (leaseMs <= clockSkewMs) {
    // Such a claim would never vouch for its run on this node's clock: it would be handed back as soon as it landed.
    throw invalidTaskInput(type, 'lease', `must be longer than the clock-skew bound (${clockSkewMs} ms), got ${leaseMs} ms`);
  }
  return { run, leaseMs, maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, backoff: options.backoff ?? DEFAULT_BACKOFF };
}
