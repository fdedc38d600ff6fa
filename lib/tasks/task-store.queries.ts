import { FINISHED_STATES, type TaskRecord } from './task';
import type { TaskQuery } from './task-store';
import { compareReady } from './task-claim.rules';
import { awaitsJoins } from './task-group.rules';

/** Whether `task` can be claimed at `now` by a node handling `types` (see `TaskStore.claimable`). */
export function isClaimable(task: TaskRecord, types: ReadonlySet<string>, now: number, lapsedBefore: number): boolean {
  if (!types.has(task.type)) return false;
  if (task.state === 'pending') return task.notBefore <= now;
  return task.state === 'running' && task.claim !== undefined && task.claim.expiresAt < lapsedBefore;
}

/** Whether `task` finished before `before` and nobody waits to hear of it (see `TaskStore.finishedBefore`). */
export function isFinishedBefore(task: TaskRecord, before: number): boolean {
  return FINISHED_STATES.has(task.state) && !task.uncounted && !awaitsJoins(task) && task.finishedAt !== undefined && task.finishedAt < before;
}

/** Whether `task` matches an operator's listing filter. */
export function matchesQuery(task: TaskRecord, query: TaskQuery): boolean {
  return (!query.types || query.types.includes(task.type))
    && (!query.states || query.states.includes(task.state))
    && (query.group === undefined || task.group?.name === query.group);
}

/** Claim order, at most `limit`. */
export function inClaimOrder(tasks: TaskRecord[], limit = Infinity): TaskRecord[] {
  return tasks.sort(compareReady).slice(0, limit);
}
