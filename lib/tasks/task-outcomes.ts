import { InvalidTaskError } from './errors/invalid-task.error';
import { RetryLaterError } from './errors/retry-later.error';
import type { TaskRecord } from '../store/tasks/task';
import type { TaskActor } from './task-claim.rules';
import type { TaskFencing } from './task-fencing';
import type { TaskGroups } from './task-groups';
import type { Registration } from './task-handler';
import { decideFinish, type RunEnd, type TaskOutcome } from './task-outcome.rules';
import type { VersionedTask } from '../store/tasks/task-store';
import type { TaskWorkerOptions } from './task-worker.options';
import type { SqlTransaction } from '../store/sql-transaction';
import { leaseExpired } from './errors/task.errors';

/**
 * How a run's claim ends on this node: its outcome recorded (done, retried after its backoff, failed, invalid) with a
 * write fenced by the claim's epoch, then counted into its group; or, at shutdown, the task handed back untouched.
 */
export class TaskOutcomes {
  constructor(
    private readonly fencing: TaskFencing,
    private readonly groups: TaskGroups,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
  ) {}

  /** Records the outcome, fenced by the epoch; then the group's progress and, once, its join. */
  async finish(task: TaskRecord, epoch: number, end: RunEnd, registration: Registration, known: VersionedTask): Promise<void> {
    const finished = await this.fencing.fenced(task.id, epoch, (current, now) => decideFinish(current, this.actor, epoch, end, now, registration.backoff, registration.maxAttempts), known);
    if (finished.outcome !== 'ok') {
      this.options.onEvent?.({ kind: 'rejected', id: task.id, epoch, reason: finished.message }); // the new holder's outcome stands
      return;
    }
    await this.recorded(finished.task, epoch, end);
  }

  /**
   * Records the outcome inside the application's transaction (`completeIn`), fenced by the epoch: it commits with the
   * caller's rows or not at all. A claim no longer this run's throws `LeaseLostError` (the caller fails the
   * transaction, so nothing of it commits). Answers what was written, for {@link TaskOutcomes.committed} once the handler returned.
   */
  async finishIn(transaction: SqlTransaction, task: TaskRecord, epoch: number, end: RunEnd, registration: Registration, known: VersionedTask): Promise<VersionedTask> {
    const { decision, raw } = await this.fencing.fencedIn(transaction, task.id, epoch, (current, now) => decideFinish(current, this.actor, epoch, end, now, registration.backoff, registration.maxAttempts), known);
    if (decision.outcome !== 'ok' || raw === undefined) throw leaseExpired(task.id, epoch, decision.outcome === 'ok' ? 'its completion was not written' : decision.message);
    return { task: decision.task, raw };
  }

  /**
   * After a handler that completed its task in its own transaction returned: whether that transaction committed (the
   * task holds this claim's end as written), and if so, what follows a finish (events, the group's progress).
   */
  async committed(written: VersionedTask, epoch: number, end: RunEnd): Promise<boolean> {
    const now = await this.fencing.readBack(written.task!.id);
    // Only this claim's own completion ends its attempt as done (a lapse or a takeover ends it otherwise).
    const done = now?.task?.attempts.some((a) => a.epoch === epoch && a.outcome === 'done') === true;
    if (!done) return false;
    await this.recorded(now!.task!, epoch, end);
    return true;
  }

  /** What follows a recorded outcome: its event, and the group's progress once final. */
  private async recorded(record: TaskRecord, epoch: number, end: RunEnd): Promise<void> {
    const error = end.outcome.kind === 'done' ? '' : end.outcome.error;
    if (record.state === 'done') this.options.onEvent?.({ kind: 'completed', task: record, epoch });
    else if (record.state === 'pending') this.options.onEvent?.({ kind: 'retrying', task: record, epoch, error });
    else this.options.onEvent?.({ kind: record.state === 'invalid' ? 'invalid' : 'failed', task: record, epoch, error });
    if (record.state === 'invalid') this.options.onInvalid?.(record, end.outcome.kind === 'invalid' ? end.outcome.error : 'invalid');
    if (record.state === 'pending') return; // retried later
    if (record.uncounted) await this.groups.progress(record);
  }

  /**
   * At shutdown (or for a claim whose answer came back too late to run it): the task goes back to pending at once,
   * with the attempt not counted.
   */
  async handBack(id: string, epoch: number, known: VersionedTask): Promise<void> {
    const back = await this.fencing.fenced(id, epoch, (current) => {
      const { claim: _claim, ...rest } = current;
      return { outcome: 'ok', task: { ...rest, state: 'pending', attempts: current.attempts.filter((a) => a.epoch !== epoch) } };
    }, known, true);
    if (back.outcome === 'ok') this.options.onEvent?.({ kind: 'handed-back', id, epoch });
  }
}

/** What a handler's error means: {@link InvalidTaskError} and {@link RetryLaterError} say so; anything else failed. */
export function outcomeOf(error: unknown): TaskOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidTaskError) return { kind: 'invalid', error: message };
  if (error instanceof RetryLaterError) return { kind: 'retry', error: message, ...(error.delayMs !== undefined && { delayMs: error.delayMs }) };
  return { kind: 'failed', error: message };
}
