import { FINISHED_STATES, GROUP_FINISHED, type GroupEnd, type GroupJoinData, type TaskGroupRecord, type TaskRecord } from '../store/tasks/task';
import { groupId, groupJoinOf, joinIdOf, joinTaskType, parentJoinOf } from './task-id.rules';

/*
 * Groups and joins (seed 004), pure: a group's record counts its tasks' ends, and the write that finds it finished
 * submits its join exactly once; a parent task whose sub-groups all joined gets a join of its own. A finished task
 * whose end a group or parent must hear of stays marked (`uncounted`) until it did.
 */

/** What creating a join found: a join to write, the same join there already, or a join of something else not done yet. */
export type JoinDecision =
  | { readonly outcome: 'create'; readonly task: TaskRecord }
  | { readonly outcome: 'exists' }
  /** A join of an earlier round, group or run holds the id and has not finished (or not been counted): try later. */
  | { readonly outcome: 'blocked'; readonly by: TaskRecord };

/**
 * A group's join task, pending: its data is what the group-finished handler receives (its attempts are the
 * group-finished handler's to set). `joinOf` names what it joins (see `TaskRecord.joinOf`): a join already there for
 * the same thing is kept (creating a join twice makes one), one for something else is replaced only once it finished
 * and was counted, and waited for until then, so no round, group or parent run ever loses its join to another.
 */
export function joinTask(join: GroupJoinData, joinOf: string, parent: string | undefined, now: number, existing?: TaskRecord): JoinDecision {
  if (existing?.joinOf === joinOf) return { outcome: 'exists' };
  if (existing && (!FINISHED_STATES.has(existing.state) || existing.uncounted)) return { outcome: 'blocked', by: existing };
  return {
    outcome: 'create',
    task: {
      id: joinIdOf(join, joinOf), type: joinTaskType(join.type), name: join.group,
      ...(parent !== undefined && { parent }),
      priority: 0, data: join, state: 'pending', seq: now * 1000, submittedAt: now, notBefore: Math.max(now, existing?.heldUntil ?? now), epoch: existing?.epoch ?? 0, attempts: [], joinOf,
      ...(existing?.heldUntil !== undefined && existing.heldUntil > now && { heldUntil: existing.heldUntil }),
    },
  };
}

/** What a group's record becomes when one of its tasks finished, and whether that write must submit the join. */
export interface GroupProgress {
  readonly group: TaskGroupRecord;
  /** Set once: the data of the group's join, for the write that found the group finished. */
  readonly join?: GroupJoinData;
  /** What the join joins (see `TaskRecord.joinOf`), with `join`. */
  readonly joinOf?: string;
  /** Task numbers to cancel (a failure with `failGroupFast`). */
  readonly cancel: number[];
}

/**
 * The record of `task`'s group before any task of it is counted. Its generation (the task's submit order) tells it
 * from an earlier group of the same name; the record is written before any join names it.
 */
export function newGroupRecord(task: TaskRecord): TaskGroupRecord {
  const position = task.group!;
  return {
    id: groupId(task.type, position.name), type: task.type, name: position.name, failGroupFast: position.failGroupFast === true,
    ...(task.parent !== undefined && { parent: task.parent }), ...(task.parentRun !== undefined && { parentRun: task.parentRun }),
    finished: {}, generation: task.seq,
  };
}

/**
 * Records `task`'s end in its group. The group is finished when every number up to its total has finished (the
 * total comes with whichever task carries it), or, with `failGroupFast`, at the first failure (the rest are to be
 * cancelled). The write that finds it finished marks `joinSubmittedAt`: compare-and-set makes that one write, so
 * the join is submitted exactly once (and its id is idempotent besides).
 */
export function decideGroupProgress(group: TaskGroupRecord | undefined, task: TaskRecord, now: number): GroupProgress {
  const position = task.group!;
  const base: TaskGroupRecord = group && rerunOf(group, task) ? rejoined(group, task) : (group ?? newGroupRecord(task));
  const total = base.total ?? position.total;
  const entry = groupEnd(task);
  const finished: TaskGroupRecord['finished'] = { ...base.finished, [String(position.number)]: entry };
  const next: TaskGroupRecord = { ...base, ...(total !== undefined && { total }), ...(base.parent === undefined && task.parent !== undefined && { parent: task.parent }), finished };
  if (next.joinSubmittedAt !== undefined) return { group: next, cancel: [] };
  const failed = task.state !== 'done';
  const failedFast = next.failGroupFast && failed;
  const complete = total !== undefined && Array.from({ length: total }, (_, i) => String(i + 1)).every((n) => n in finished);
  if (!complete && !failedFast) return { group: next, cancel: [] };
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const [n, f] of Object.entries(finished)) {
    if (f.state === 'done') results[n] = f.result;
    else errors[n] = f.error ?? f.state;
  }
  const cancel = failedFast && total !== undefined ? Array.from({ length: total }, (_, i) => i + 1).filter((n) => !(String(n) in finished)) : [];
  return {
    group: { ...next, joinSubmittedAt: now },
    joinOf: groupJoinOf(next),
    join: { group: next.name, type: next.type, total: total ?? Object.keys(finished).length, results, errors, failedFast, ...(next.round && { round: next.round }) },
    cancel,
  };
}

/** Whether `task` comes from a later run of the parent than the one whose sub-group `group` joined already. */
function rerunOf(group: TaskGroupRecord, task: TaskRecord): boolean {
  return group.joinSubmittedAt !== undefined && task.parentRun !== undefined && group.parentRun !== undefined && task.parentRun !== group.parentRun;
}

/**
 * A joined sub-group that a new run of its parent added tasks to (its other tasks remembered from the earlier run):
 * a new round, so the new run's parent hears of it, with the ends of both runs' tasks.
 */
function rejoined(group: TaskGroupRecord, task: TaskRecord): TaskGroupRecord {
  const { joinSubmittedAt: _j, ...rest } = group;
  return { ...rest, round: (group.round ?? 0) + 1, parentRun: task.parentRun };
}

/**
 * Whether a `failGroupFast` group stopped at a failure: its join is submitted, and not because every task ended.
 * Tasks of it that are still waiting, or submitted later, are cancelled instead of run.
 */
export function groupStoppedFast(group: TaskGroupRecord | undefined): boolean {
  if (!group?.failGroupFast || group.joinSubmittedAt === undefined) return false;
  return Object.values(group.finished).some((f) => f.state !== 'done');
}

/** The end of a task as its group or parent hears of it. */
export function groupEnd(task: TaskRecord): GroupEnd {
  return task.state === 'done' ? { state: task.state, result: task.result } : { state: task.state, error: task.attempts.at(-1)?.error ?? task.state };
}

/** What a parent task becomes when the join of one of its sub-groups (`groupId`) ended as `end`. */
export function recordSubgroupJoin(parent: TaskRecord, groupId: string, end: GroupEnd): TaskRecord {
  return { ...parent, subgroups: { ...parent.subgroups, joined: { ...parent.subgroups?.joined, [groupId]: end } } };
}

/**
 * The parent's own join, once it is due: the parent finished and the joins of every sub-group it submitted ended.
 * Returns the parent marked (`joinSubmittedAt`) and the join's data: the sub-groups' join results and errors by
 * group id. Nothing for a task with no sub-groups, one not finished, or one whose join was submitted already.
 */
export function decideParentJoin(parent: TaskRecord, now: number): { readonly parent: TaskRecord; readonly join: GroupJoinData; readonly joinOf: string } | undefined {
  const progress = parent.subgroups;
  if (!progress?.submitted?.length || progress.joinSubmittedAt !== undefined || !FINISHED_STATES.has(parent.state)) return undefined;
  if (!progress.submitted.every((g) => g in progress.joined)) return undefined;
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const g of progress.submitted) {
    const end = progress.joined[g];
    if (end.state === 'done') results[g] = end.result;
    else errors[g] = end.error ?? end.state;
  }
  return {
    parent: { ...parent, subgroups: { ...progress, joinSubmittedAt: now } },
    joinOf: parentJoinOf(parent),
    join: { group: parent.id.slice(parent.type.length + 1), type: parent.type, total: progress.submitted.length, results, errors, failedFast: false },
  };
}

/**
 * A finished task whose end others must hear of is marked until they did: a grouped task until its group counted
 * it, a join of sub-tasks until its parent recorded it, a parent whose sub-groups all joined until its own join
 * was submitted.
 */
export function withCounting(task: TaskRecord): TaskRecord {
  const mark = task.group || (task.parent !== undefined && task.type.endsWith(`#${GROUP_FINISHED}`)) || decideParentJoin(task, 0) !== undefined;
  return mark ? { ...task, uncounted: true } : task;
}

/** The task once its group record counted it. */
export function counted(task: TaskRecord): TaskRecord {
  const { uncounted: _u, ...rest } = task;
  return rest;
}

/**
 * A group reopened for an operator's retry of its task `number`: the task's end is forgotten, and if the group's
 * join was submitted (`joined`: marked, or found created for this round), the group starts a new round, which gets
 * its own join once the retried task ends.
 */
export function decideReopen(group: TaskGroupRecord, number: number, joined = group.joinSubmittedAt !== undefined): TaskGroupRecord {
  const { [String(number)]: _gone, ...finished } = group.finished;
  const { joinSubmittedAt: _j, ...rest } = group;
  return joined ? { ...rest, finished, round: (group.round ?? 0) + 1 } : { ...rest, finished };
}
