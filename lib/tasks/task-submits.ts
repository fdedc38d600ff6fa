import type { TaskRecord } from '../store/tasks/task';
import { decideCancel } from './task-outcome.rules';
import { stoppedFast } from './task-groups';
import { taskId } from './task-id.rules';
import type { SqlTransaction, TaskStore, VersionedTask } from '../store/tasks/task-store';
import { decideSubmit, type SubmitInput } from './task-submit.rules';
import { retentionOf, type TaskWorkerOptions } from './task-worker.options';
import { readDecideWrite, type Decision } from '../store/read-decide-write';
import { taskSlot, transactionTaskSlot } from './task-slots';
import { encodeTask } from '../store/tasks/task.codec';
import { invalidTaskInput } from '../core/errors/input.errors';

/** What a submit answers: the task, and whether this submit created it (or found it). */
type Submitted = { created: boolean; task: TaskRecord };

/** Submits of one process: idempotent by id, in an order that only grows (see {@link TaskSubmits.submit}). */
export class TaskSubmits {
  /** The last submit order this process gave. */
  private lastSeq = 0;

  constructor(
    private readonly store: TaskStore,
    private readonly options: TaskWorkerOptions,
  ) {}

  /** A submit, and whether it created the task (or found it). */
  async submit(input: SubmitInput): Promise<Submitted> {
    const id = taskId(input); // bad input fails here, naming the field, before any call
    // A new id is created in one call (put-if-absent); only an id that exists is read and decided on.
    const absent: VersionedTask = { task: undefined, raw: null };
    return readDecideWrite<VersionedTask, TaskRecord | null, Submitted>(`submit task "${id}"`, taskSlot(this.store, id), (read) => this.decide(read, input), { known: absent });
  }

  /**
   * Checks `input` as {@link TaskSubmits.submit} would, with no store call: throws `InvalidInputError` naming the
   * task and the field.
   */
  check(input: SubmitInput): void {
    decideSubmit(undefined, input, this.options.clock.now(), retentionOf(this.options));
  }

  /**
   * A submit inside the application's own database transaction (`transaction`): the task is written with the
   * caller's rows, and exists only if their transaction commits. Decided as {@link TaskSubmits.submit} decides.
   */
  async submitIn(transaction: SqlTransaction, input: SubmitInput): Promise<Submitted> {
    const id = taskId(input);
    const write = this.store.writeInTransaction;
    // The backend's transaction records refuse another dialect, also before any statement.
    if (!write) {
      throw invalidTaskInput(id, 'transaction', 'a task is submitted in your transaction on the PostgreSQL backend only');
    }
    const { slot, options } = transactionTaskSlot(this.store, write, transaction, id, { task: undefined, raw: null });
    return readDecideWrite<VersionedTask, string, Submitted>(`submit task "${id}" in a transaction`, slot, async (read) => {
      const decision = await this.decide(read, input);
      return decision.write === undefined || decision.write === null ? { result: decision.result } : { result: decision.result, write: encodeTask(decision.write) };
    }, options);
  }

  private async decide(read: VersionedTask, input: SubmitInput): Promise<Decision<Submitted, TaskRecord | null>> {
    const now = this.options.clock.now();
    // Submit order, unique and increasing within this process even for many submits in one millisecond.
    this.lastSeq = Math.max(now * 1000, this.lastSeq + 1);
    const decision = decideSubmit(read.task, { ...input, seq: this.lastSeq }, now, retentionOf(this.options));
    if (decision.outcome === 'exists') return { result: { created: false, task: decision.task } };
    let task = decision.task;
    // A task of a group that already stopped at a failure is not run.
    if (await stoppedFast(this.store, task)) task = decideCancel(task, now) ?? task;
    return { result: { created: true, task }, write: task };
  }
}
