import type { TaskRecord } from './task';

/*
 * What every task store must know of a task, whichever backend keeps it: the order tasks are claimed in, and which
 * finished tasks it keeps. The store contract's own rules, so a backend's native task store needs nothing of the
 * tasks capability.
 */

/** Claim order: higher priority first, then submit order, then id. */
export function compareReady(a: Pick<TaskRecord, 'priority' | 'seq' | 'id'>, b: Pick<TaskRecord, 'priority' | 'seq' | 'id'>): number {
  return b.priority - a.priority || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Whether a finished parent still waits for the joins of sub-groups it submitted (its own join not submitted yet):
 * such a task is kept (not purged, and a submit of its id does not replace it), or its join would be lost.
 */
export function awaitsJoins(task: TaskRecord): boolean {
  return (task.subgroups?.submitted?.length ?? 0) > 0 && task.subgroups!.joinSubmittedAt === undefined;
}
