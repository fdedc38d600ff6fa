import type { TaskRecord } from './task';
import { decideCancel } from './task-outcome.rules';
import { stoppedFast } from './task-groups';
import { taskId } from './task-id.rules';
import type { TaskStore, VersionedTask } from './task-store';
import { decideSubmit, type SubmitInput } from './task-submit.rules';
import { retentionOf, type TaskWorkerOptions } from './task-worker.options';
import { readDecideWrite } from '../store/read-decide-write';
import { taskSlot } from './task-slots';

/** Submits of one process: idempotent by id, in an order that only grows (see {@link TaskSubmits.submit}). */
export class TaskSubmits {
  /** The last submit order this process gave. */
  private lastSeq = 0;

  constructor(
    private readonly store: TaskStore,
    private readonly options: TaskWorkerOptions,
  ) {}

  /** A submit, and whether it created the task (or found it). */
  async submit(input: SubmitInput): Promise<{ created: boolean; task: TaskRecord }> {
    const id = taskId(input); // bad input fails here, naming the field, before any call
    // A new id is created in one call (put-if-absent); only an id that exists is read and decided on.
    const absent: VersionedTask = { task: undefined, raw: null };
    return readDecideWrite<VersionedTask, TaskRecord | null, { created: boolean; task: TaskRecord }>(`submit task "${id}"`, taskSlot(this.store, id), async (read) => {
      const now = this.options.clock.now();
      // Submit order, unique and increasing within this process even for many submits in one millisecond.
      this.lastSeq = Math.max(now * 1000, this.lastSeq + 1);
      const decision = decideSubmit(read.task, { ...input, seq: this.lastSeq }, now, retentionOf(this.options));
      if (decision.outcome === 'exists') return { result: { created: false, task: decision.task } };
      let task = decision.task;
      // A task of a group that already stopped at a failure is not run.
      if (await stoppedFast(this.store, task)) task = decideCancel(task, now) ?? task;
      return { result: { created: true, task }, write: task };
    }, { known: absent });
  }
}
