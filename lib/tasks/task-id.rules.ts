import { MAX_NAME_LENGTH, nameProblem, shownName } from '../core/names';
import { GROUP_FINISHED, type GroupJoinData, type TaskGroupRecord, type TaskIdentity, type TaskRecord } from '../store/tasks/task';
import { invalidTaskInput } from '../core/errors/input.errors';

/*
 * Task ids, pure (seed 004): what a task, a group's record and a join are called, and what a join joins (`joinOf`).
 * A join's type and id are built from its group's, so that submitting a join twice makes one task.
 */

const ID_PART = /^[^:#\s][^:#]*$/;

/** The most characters of a task's type, name or group name. */
export const MAX_TASK_NAME_LENGTH = MAX_NAME_LENGTH;

/**
 * What is wrong with a task's type or group name: a name (lib/core/names) without ':' or '#' (they separate an id's
 * parts), not starting with a space.
 */
export function taskIdPartProblem(value: unknown): string | undefined {
  const what = "a non-empty string without ':' or '#'";
  return nameProblem(value, { max: MAX_TASK_NAME_LENGTH, what }) ?? (ID_PART.test(value as string) ? undefined : `must be ${what}, got ${JSON.stringify(value)}`);
}

/** The id of a task: `<type>:<name>` or `<type>:<group>:<number>`. Throws naming the bad part. */
export function taskId(identity: TaskIdentity): string {
  const { type, name, group } = identity;
  const owner = typeof type === 'string' ? shownName(type) : String(type);
  const check = (field: string, value: unknown) => {
    const problem = taskIdPartProblem(value);
    if (problem !== undefined) throw invalidTaskInput(owner, field, problem);
  };
  check('type', type);
  if ((name === undefined) === (group === undefined)) throw invalidTaskInput(owner, 'name', 'give either a name (a single task) or a group position');
  if (name !== undefined) {
    // A name may hold ':' (a trigger time): the type, before the first ':', never does.
    const problem = nameProblem(name, { max: MAX_TASK_NAME_LENGTH });
    if (problem !== undefined) throw invalidTaskInput(owner, 'name', problem);
    return `${type}:${name}`;
  }
  check('group.name', group!.name);
  if (!Number.isSafeInteger(group!.number) || group!.number < 1) {
    throw invalidTaskInput(owner, 'group.number', `must be a whole number, 1 or more, got ${JSON.stringify(group!.number)}`);
  }
  if (group!.total !== undefined && (!Number.isSafeInteger(group!.total) || group!.total < group!.number)) {
    throw invalidTaskInput(owner, 'group.total', `must be a whole number, at least the task's number (${group!.number}), got ${JSON.stringify(group!.total)}`);
  }
  return `${type}:${group!.name}:${group!.number}`;
}

/** The id of a group's record: `<type>:<group>`. */
export function groupId(type: string, group: string): string {
  return `${type}:${group}`;
}

/**
 * The type of the join (group-finished) tasks of `type`: claimed only by nodes with a group-finished handler for
 * `type`, which may differ from those that run its tasks.
 */
export function joinTaskType(type: string): string {
  return `${type}#${GROUP_FINISHED}`;
}

/** The id of a group's join task: `<type>#group-finished:<group>` (one per group, so its submit is idempotent). */
export function joinTaskId(type: string, group: string): string {
  return `${joinTaskType(type)}:${group}`;
}

const PARENT_JOIN = 'parent ';

/** Whether `joinOf` names a parent run (its own join), not a group round. */
export function isParentJoin(joinOf: string | undefined): boolean {
  return joinOf?.startsWith(PARENT_JOIN) ?? false;
}

/**
 * The id of a parent task's own join, heard once all its sub-groups joined: `<type>#group-finished:parent:<name>`
 * for the parent `<type>:<name>`. A group's name holds no ':', so a parent's join never shares its id with a group's,
 * whatever the parent is called.
 */
export function parentJoinTaskId(type: string, name: string): string {
  return `${joinTaskType(type)}:parent:${name}`;
}

/** The id of the join that `joinOf` names (see `TaskRecord.joinOf`): a parent run's own, or a group round's. */
export function joinIdOf(join: Pick<GroupJoinData, 'type' | 'group'>, joinOf: string): string {
  return isParentJoin(joinOf) ? parentJoinTaskId(join.type, join.group) : joinTaskId(join.type, join.group);
}

/** The task type a join task type belongs to, or `undefined` for an ordinary type. */
export function joinedType(type: string): string | undefined {
  return type.endsWith(`#${GROUP_FINISHED}`) ? type.slice(0, -GROUP_FINISHED.length - 1) : undefined;
}

/** What a group's join joins: one round of one generation of the group. */
export function groupJoinOf(group: TaskGroupRecord): string {
  return `group ${group.generation ?? 0}/${group.round ?? 0}`;
}

/** What a parent's join joins: the parent's last run (its claim epoch, which grows with every run, rerun or retry). */
export function parentJoinOf(parent: TaskRecord): string {
  return `${PARENT_JOIN}${parent.epoch}`;
}
