import type { TaskRecord } from '../../../store/tasks/task';
import { awaitsJoins } from '../../../store/tasks/task-store.rules';
import { placeOf } from '../../../store/tasks/task-rank.rules';

/** A number as the index line writes it: '' when absent (or not finite, which no index takes). */
const field = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? String(n) : '');

/**
 * What the task scripts index a task by (see `TASK_SCRIPTS.write`), as one line they read without decoding the task:
 * its place in claim order, state, `notBefore`, `submittedAt`, its claim's expiry, whether it is uncounted, when it
 * finished, whether it awaits its sub-groups' joins, and last its type (the only field that may hold any character).
 * Stored beside the task (`T:ix:<map>`), so replacing it does not decode the old value either.
 */
export function taskIndexLine(task: TaskRecord): string {
  return [
    placeOf(task), task.state, field(task.notBefore), field(task.submittedAt), field(task.claim?.expiresAt),
    task.uncounted === true ? '1' : '0', field(task.finishedAt), awaitsJoins(task) ? '1' : '0', task.type,
  ].join('|');
}
