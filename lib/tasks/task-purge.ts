/* Removing finished tasks: every node's slow purge of those past the retention window, and an operator's purge. */

import type { TaskGroupRecord, TaskRecord } from '../store/tasks/task';
import type { TaskStore } from '../store/tasks/task-store';
import { groupId, groupJoinOf, isParentJoin, joinedType, parentJoinOf } from './task-id.rules';
import { isPurgeable } from './task-outcome.rules';


/**
 * Removes tasks finished longer than `retentionMs` before `now`, `batch` at a time until none is left, with the
 * records of groups whose last task or join they were. Every node runs it on a slow timer; removals are
 * compare-and-set, so nodes racing each other remove each task once.
 */
export async function purgeExpired(store: TaskStore, now: number, retentionMs: number, batch = 500): Promise<number> {
  let removed = 0;
  // A full batch may hide more; a batch that removed nothing (others are removing the same) ends the pass, and so
  // does the pass's bound: the next pass goes on where this one stopped.
  for (let pass = 0; pass < MAX_BATCHES_PER_PASS; pass++) {
    const found = await store.finishedBefore(now - retentionMs, batch);
    const gone = await removeFinished(store, found.filter((task) => isPurgeable(task, now, retentionMs)), now);
    removed += gone;
    if (found.length < batch || gone === 0) break;
  }
  return removed;
}

/** At most this many batches per purge pass, so one pass never runs for ever behind a store that keeps filling. */
const MAX_BATCHES_PER_PASS = 1_000;

/**
 * Removes finished tasks as they were read. A group's record is removed with the last of its tasks, before it: so a
 * record never outlives its tasks (a group submitted again under its name would count into it and never join), and
 * no task of the group is ever counted into a new record while the old one stands. A join is kept while the record
 * (or parent) it joins does not show it yet: a node died between creating it and marking the group, and the
 * group's last task, counted again later, would find no join and create a second one.
 */
export async function removeFinished(store: TaskStore, tasks: readonly TaskRecord[], now: number): Promise<number> {
  const groups = new Map<string, { type: string; name: string; members: TaskRecord[] }>();
  let removed = 0;
  for (const task of tasks) {
    const of = groupOf(task);
    if (!of) {
      if (!(await joinAwaitsMark(store, task, undefined)) && (await removeTask(store, task, now))) removed++;
      continue;
    }
    const id = groupId(of.type, of.name);
    (groups.get(id) ?? groups.set(id, { ...of, members: [] }).get(id)!).members.push(task);
  }
  for (const [id, { type, name, members }] of groups) {
    const [rest, record] = await Promise.all([store.query({ types: [type], group: name }), store.readGroup(id)]);
    for (const join of members.filter((m) => !m.group)) {
      if (!(await joinAwaitsMark(store, join, record.group)) && (await removeTask(store, join, now))) removed++;
    }
    const own = members.filter((m) => m.group);
    const removing = new Set(own.map((m) => m.id));
    const last = own.length === 0 || rest.some((t) => !removing.has(t.id)) ? undefined : own.at(-1);
    let gone = 0;
    for (const member of own) if (member !== last && (await removeTask(store, member, now))) gone++;
    // The record only as read: changed since (an operator's retry reopened it), the group is left whole.
    if (last && gone === own.length - 1 && (!record.group || (await store.compareAndSetGroup(id, record, null)))) {
      if (await removeTask(store, last, now)) gone++;
    }
    removed += gone;
  }
  return removed;
}

/** Whether a join's group record (or parent) exists and does not show it yet (see `removeFinished`). */
async function joinAwaitsMark(store: TaskStore, join: TaskRecord, group: TaskGroupRecord | undefined): Promise<boolean> {
  if (group && group.joinSubmittedAt === undefined && groupJoinOf(group) === join.joinOf) return true;
  if (!isParentJoin(join.joinOf)) return false;
  const parent = (await store.read(`${joinedType(join.type)}:${join.name}`)).task;
  return parent !== undefined && parent.subgroups?.joinSubmittedAt === undefined && parentJoinOf(parent) === join.joinOf;
}

/** The group a task belongs to: its own, or for a group's join, the group it joins (a parent's own join has none). */
function groupOf(task: TaskRecord): { type: string; name: string } | undefined {
  if (task.group) return { type: task.type, name: task.group.name };
  if (isParentJoin(task.joinOf)) return undefined;
  const joined = joinedType(task.type);
  return joined !== undefined && task.name !== undefined ? { type: joined, name: task.name } : undefined;
}

/** Removes one finished task if it is still the run that was read and nobody waits to hear of it. */
async function removeTask(store: TaskStore, task: TaskRecord, now: number): Promise<boolean> {
  const read = await store.read(task.id);
  if (!read.task || read.task.finishedAt !== task.finishedAt || !isPurgeable(read.task, now, 0, true)) return false;
  return store.compareAndSet(task.id, read, null);
}
