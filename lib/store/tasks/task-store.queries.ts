import { FINISHED_STATES, type TaskRecord } from './task';
import type { TaskQuery, TaskStore } from './task-store';
import { compareReady } from './task-store.rules';
import { awaitsJoins } from './task-store.rules';

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

/**
 * A worker's periodic scan (see `TaskStore.scan`): the store's one call where it has one, else its two queries apart.
 * With no types, or a limit of 0, the store is not asked.
 */
export async function scanTasks(
  store: TaskStore,
  types: readonly string[],
  now: number,
  lapsedBefore: number,
  limits: { readonly claimable: number; readonly uncounted: number },
): Promise<{ readonly claimable: TaskRecord[]; readonly uncounted: TaskRecord[] }> {
  if (types.length === 0 || limits.claimable <= 0 || limits.uncounted <= 0) return { claimable: [], uncounted: [] };
  if (store.scan) return store.scan(types, now, lapsedBefore, limits);
  const [claimable, uncounted] = await Promise.all([store.claimable(types, now, lapsedBefore, limits.claimable), store.uncounted(types, limits.uncounted)]);
  return { claimable, uncounted };
}
