import type { ReadDecideWriteOptions, RecordSlot } from '../store/read-decide-write';
import type { SqlTransaction } from '../store/sql-transaction';
import type { TaskGroupRecord, TaskRecord } from '../store/tasks/task';
import { decodeTask, encodeGroup, encodeTask, finishEnds } from '../store/tasks/task.codec';
import type { TaskStore, VersionedGroup, VersionedTask } from '../store/tasks/task-store';

/**
 * A task's record as a slot of the one read-decide-write (`readDecideWrite`): `null` removes it. A write whose answer
 * was lost landed when the task read back is exactly the one written: a task's text carries its writer's decision
 * (a claim's epoch and instance, an attempt's times), and a text equal to it is that decision, taken once.
 */
export function taskSlot(store: TaskStore, id: string, readBack?: RecordSlot<VersionedTask, TaskRecord | null>['readBack']): RecordSlot<VersionedTask, TaskRecord | null> {
  return {
    read: (call) => store.read(id, call),
    write: (read, next, call) => {
      // A finish sends its ends where the store takes them (see `finishEnds`): the same write, a third of the bytes.
      const ends = store.replaceEnds && finishEnds(read, next);
      return ends ? store.replaceEnds!(id, ends.expected, ends.next, next!, call) : store.compareAndSet(id, read, next, call);
    },
    // A finish written by its ends holds the text `finishEnds` made its encoding.
    holds: (back, next) => back.raw === (next && encodeTask(next)),
    ...(readBack && { readBack }),
  };
}

/** A task group's record as a slot of the one read-decide-write, as {@link taskSlot}. */
export function groupSlot(store: TaskStore, id: string): RecordSlot<VersionedGroup, TaskGroupRecord | null> {
  return {
    read: (call) => store.readGroup(id, call),
    write: (read, next, call) => store.compareAndSetGroup(id, read, next, call),
    holds: (back, next) => back.raw === (next && encodeGroup(next)),
  };
}

/**
 * A task's record written in the application's transaction (the store's `writeInTransaction`), as a slot of the one
 * read-decide-write, with what the loop starts from and learns: it decides first on `known`, and a write that lost
 * its race answers what the transaction found instead, which the next attempt decides on (no read outside the
 * transaction). Writes the encoded text (`next`), once per attempt. A failed write fails the loop: the
 * transaction's own outcome settles it.
 */
export function transactionTaskSlot(
  store: TaskStore,
  write: NonNullable<TaskStore['writeInTransaction']>,
  transaction: SqlTransaction,
  id: string,
  known: VersionedTask,
): { slot: RecordSlot<VersionedTask, string>; options: ReadDecideWriteOptions<VersionedTask> } {
  let found: VersionedTask | undefined;
  return {
    slot: {
      read: (call) => store.read(id, call),
      write: async (read, raw) => {
        const { landed, current } = await write.call(store, transaction, id, read.raw, raw);
        found = landed ? undefined : { task: current === null ? undefined : decodeTask(id, current), raw: current };
        return landed;
      },
    },
    options: { known, learned: () => found },
  };
}
