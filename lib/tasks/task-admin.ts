import type { Clock } from '../core/clock';
import { parseDuration } from '../core/duration';
import type { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { FINISHED_STATES, type TaskGroupRecord, type TaskRecord, type TaskState } from './task';
import { InvalidTaskQueryError, TaskActionRefusedError, UnknownTaskError } from './task-errors';
import type { TaskQuery, TaskStore } from './task-store';
import { decideCancel, decideReopen, decideRetry, groupId, groupJoinOf, isParentJoin, isPurgeable, joinedType, joinTaskId, parentJoinOf } from './task.rules';

/** Tasks by state, for one type. */
export type TaskStateCounts = Readonly<Record<TaskState, number>>;

/** A group's progress, for operators. */
export interface TaskGroupStatus {
  /** `<type>:<group>`. */
  readonly id: string;
  /** The task type of the group's tasks. */
  readonly type: string;
  /** The group's name. */
  readonly name: string;
  /** Known once a task carried it. */
  readonly total?: number;
  /** Tasks of the group by state (those stored now). */
  readonly states: TaskStateCounts;
  /** How many ended, as the group record counted them. */
  readonly finished: number;
  /** How many of those failed, were invalid or cancelled. */
  readonly failed: number;
  /** Whether one failure stops the rest of the group. */
  readonly failGroupFast: boolean;
  /** When its join was submitted (the group is complete), if it was. */
  readonly joinSubmittedAt?: number;
  /** The join task's state, once it exists. */
  readonly join?: TaskState;
  /** The task whose handler submitted the group's tasks, if one did. */
  readonly parent?: string;
  /** The group's round: 0, or how often an operator reopened it by retrying one of its tasks after its join. */
  readonly round: number;

}

/** What an operator's purge removes. */
export interface TaskPurgeOptions {
  /** Only these types. */
  readonly types?: readonly string[];
  /** Only these finished states (default: all of them). */
  readonly states?: readonly TaskState[];
  /** Only tasks that finished at least this long ago (ms). Default 0: every finished task. */
  readonly olderThanMs?: number;
}

const STATES: readonly TaskState[] = ['pending', 'running', 'done', 'failed', 'invalid', 'cancelled'];

/** What an operator's listing asks for, as text (query string, command line): validated into a query and a limit. */
export interface TaskListInput {
  /** Types, comma-separated or a list. */
  readonly types?: string | readonly string[];
  /** States, comma-separated or a list. */
  readonly states?: string | readonly string[];
  readonly group?: string;
  readonly limit?: string | number;
}

/** Validates an operator's listing; throws {@link InvalidTaskQueryError} naming the field. */
export function parseTaskList(input: TaskListInput): { query: TaskQuery; limit: number } {
  const list = (field: string, value: unknown): string[] | undefined => {
    if (value === undefined) return undefined;
    // Input comes from JSON bodies too: anything but text or a list of text is the caller's error, not a 500.
    if (typeof value !== 'string' && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
      throw new InvalidTaskQueryError(field, `must be comma-separated text or a list of strings, got ${JSON.stringify(value)}`);
    }
    return (typeof value === 'string' ? value.split(',') : value).map((v) => v.trim()).filter(Boolean);
  };
  const types = list('type', input.types);
  const states = list('state', input.states);
  for (const state of states ?? []) {
    if (!(STATES as readonly string[]).includes(state)) throw new InvalidTaskQueryError('state', `"${state}" is not a task state (one of ${STATES.join(', ')})`);
  }
  const limit = input.limit === undefined || input.limit === '' ? 100 : Number(input.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new InvalidTaskQueryError('limit', `must be a whole number from 1 to 10000, got ${JSON.stringify(input.limit)}`);
  if (input.group !== undefined && (typeof input.group !== 'string' || input.group.trim() === '')) throw new InvalidTaskQueryError('group', 'must be a group name');
  return {
    query: { ...(types?.length && { types }), ...(states?.length && { states: states as TaskState[] }), ...(input.group !== undefined && { group: input.group }) },
    limit,
  };
}

/** What an operator's purge asks for, as text: validated into {@link TaskPurgeOptions}. */
export interface TaskPurgeInput {
  readonly types?: string | readonly string[];
  /** Finished states only. */
  readonly states?: string | readonly string[];
  /** Only tasks finished at least this long ago: ms, or `'1h'`. */
  readonly olderThan?: string | number;
}

/** Validates an operator's purge; throws {@link InvalidTaskQueryError} naming the field. */
export function parseTaskPurge(input: TaskPurgeInput): TaskPurgeOptions {
  const { query } = parseTaskList({ types: input.types, states: input.states });
  for (const state of query.states ?? []) {
    if (!FINISHED_STATES.has(state)) throw new InvalidTaskQueryError('state', `"${state}" is not a finished state (one of ${[...FINISHED_STATES].join(', ')})`);
  }
  let olderThanMs = 0;
  if (input.olderThan !== undefined && input.olderThan !== '') {
    try {
      olderThanMs = parseDuration(/^\d+$/.test(String(input.olderThan)) ? Number(input.olderThan) : input.olderThan, '<task purge>', 'olderThan', { allowZero: true });
    } catch (error) {
      throw new InvalidTaskQueryError('olderThan', (error as InvalidDefinitionError).reason ?? String(error));
    }
  }
  return { ...(query.types && { types: query.types }), ...(query.states && { states: query.states }), olderThanMs };
}

const EMPTY_COUNTS: TaskStateCounts = { pending: 0, running: 0, done: 0, failed: 0, invalid: 0, cancelled: 0 };

/**
 * Operators' tools over tasks: counts, listings, one task with its attempts, retry, cancel, purge and group
 * progress. Every change is a compare-and-set on the task (and its group), so it never races a worker's write.
 */
export class TaskAdmin {
  constructor(
    private readonly store: TaskStore,
    private readonly clock: Clock,
    private readonly options: {
      readonly retentionMs: number;
      /** The bound on clock disagreement (the module's `maxClockSkew`): a cancelled run is held this much past its lease. Default 500 ms. */
      readonly clockSkewMs?: number;
    },
  ) {}

  /** Tasks by type and state (a listing of every task: an operator's call, not a hot path). */
  async counts(): Promise<Record<string, TaskStateCounts>> {
    const counts: Record<string, Record<TaskState, number>> = {};
    for (const task of await this.store.query({})) (counts[task.type] ??= { ...EMPTY_COUNTS })[task.state]++;
    return counts;
  }

  /** Tasks matching `query`, in claim order, at most `limit`. */
  async list(query: TaskQuery = {}, limit = 100): Promise<TaskRecord[]> {
    return (await this.store.query(query)).slice(0, limit);
  }

  /** One task with its attempts and errors, or `undefined`. */
  async get(id: string): Promise<TaskRecord | undefined> {
    return (await this.store.read(id)).task;
  }

  /**
   * Retries a failed, invalid or cancelled task: pending again with a fresh budget of attempts. A grouped task's
   * group is reopened first (its end forgotten; a group that had joined starts a new round with a join of its own).
   */
  async retry(id: string): Promise<TaskRecord> {
    const refuse = (task: TaskRecord) => new TaskActionRefusedError(id, 'retry', task.uncounted
      ? 'its group has not counted its end yet; try again in a moment'
      : `it is ${task.state} (only failed, invalid or cancelled tasks are retried)`);
    // Checked before its group is touched: a refused retry must leave the group's count as it is (its join depends on it).
    const first = await this.store.read(id);
    if (!first.task) throw new UnknownTaskError(id);
    if (!decideRetry(first.task, this.clock.now())) throw refuse(first.task);
    if (first.task.group) {
      // Every end of the group counted first: a round must not start against ends of the last one still arriving.
      const counting = (await this.store.query({ types: [first.task.type], group: first.task.group.name })).filter((t) => t.uncounted);
      if (counting.length > 0) {
        throw new TaskActionRefusedError(id, 'retry', `its group has not counted the end of ${counting.map((t) => t.id).slice(0, 3).join(', ')} yet; try again in a moment`);
      }
      if (!(await this.reopen(first.task))) {
        throw new TaskActionRefusedError(id, 'retry', 'its group\'s record is gone (purged): submit the group again instead');
      }
    }
    for (;;) {
      const read = await this.store.read(id);
      if (!read.task) throw new UnknownTaskError(id);
      const next = decideRetry(read.task, this.clock.now());
      if (!next) throw refuse(read.task);
      if (await this.store.compareAndSet(id, read, next)) return next;
    }
  }

  /** Cancels a pending or running task (a running handler learns it at its next renewal; its finish is rejected). */
  async cancel(id: string): Promise<TaskRecord> {
    for (;;) {
      const read = await this.store.read(id);
      if (!read.task) throw new UnknownTaskError(id);
      const next = decideCancel(read.task, this.clock.now(), undefined, this.options.clockSkewMs ?? 500);
      if (!next) throw new TaskActionRefusedError(id, 'cancel', `it is ${read.task.state} already`);
      if (await this.store.compareAndSet(id, read, next)) return next;
    }
  }

  /**
   * Removes finished tasks (their ids are forgotten: a submit of one runs it again), and a group's record with the
   * last of its tasks. Tasks a group or parent still waits to hear of, joins their group does not show yet, and
   * cancelled runs whose lease may still be running are kept. Returns how many were removed.
   */
  async purge(options: TaskPurgeOptions = {}): Promise<number> {
    const now = this.clock.now();
    const states = options.states ?? [...FINISHED_STATES];
    const candidates = await this.store.query({ ...(options.types && { types: options.types }), states });
    return removeFinished(this.store, candidates.filter((task) => isPurgeable(task, now, options.olderThanMs ?? 0, options.olderThanMs === undefined)), now);
  }

  /** A group's progress, or `undefined` when neither its record nor any of its tasks exists. */
  async group(type: string, name: string): Promise<TaskGroupStatus | undefined> {
    const [{ group }, tasks, join] = await Promise.all([
      this.store.readGroup(groupId(type, name)),
      this.store.query({ types: [type], group: name }),
      this.store.read(joinTaskId(type, name)),
    ]);
    if (!group && tasks.length === 0) return undefined;
    const states: Record<TaskState, number> = { ...EMPTY_COUNTS };
    for (const task of tasks) states[task.state]++;
    const ends = Object.values(group?.finished ?? {});
    return {
      id: groupId(type, name), type, name, states,
      ...((group?.total ?? tasks.find((t) => t.group?.total !== undefined)?.group?.total) !== undefined && { total: group?.total ?? tasks.find((t) => t.group?.total !== undefined)!.group!.total }),
      finished: ends.length,
      failed: ends.filter((e) => e.state !== 'done').length,
      failGroupFast: group?.failGroupFast ?? tasks.some((t) => t.group?.failGroupFast === true),
      ...(group?.joinSubmittedAt !== undefined && { joinSubmittedAt: group.joinSubmittedAt }),
      ...(join.task && { join: join.task.state }),
      ...((group?.parent ?? tasks[0]?.parent) !== undefined && { parent: group?.parent ?? tasks[0]?.parent }),
      round: group?.round ?? 0,
    };
  }

  /** Reopens the task's group for its retry; false when the group's record is gone (a purge removed it). */
  private async reopen(task: TaskRecord): Promise<boolean> {
    const id = groupId(task.type, task.group!.name);
    for (;;) {
      const read = await this.store.readGroup(id);
      if (!read.group) return false;
      if (!(String(task.group!.number) in read.group.finished)) return true;
      // A join created for this round counts as submitted even if the group's mark was never written (its node died).
      const join = (await this.store.read(joinTaskId(task.type, task.group!.name))).task;
      const joined = read.group.joinSubmittedAt !== undefined || join?.joinOf === groupJoinOf(read.group);
      if (await this.store.compareAndSetGroup(id, read, decideReopen(read.group, task.group!.number, joined))) return true;
    }
  }
}

/**
 * Removes tasks finished longer than `retentionMs` before `now`, `batch` at a time until none is left, with the
 * records of groups whose last task or join they were. Every node runs it on a slow timer; removals are
 * compare-and-set, so nodes racing each other remove each task once.
 */
export async function purgeExpired(store: TaskStore, now: number, retentionMs: number, batch = 500): Promise<number> {
  let removed = 0;
  for (;;) {
    const found = await store.finishedBefore(now - retentionMs, batch);
    const gone = await removeFinished(store, found.filter((task) => isPurgeable(task, now, retentionMs)), now);
    removed += gone;
    // A full batch may hide more; a batch that removed nothing (others are removing the same) ends the pass.
    if (found.length < batch || gone === 0) return removed;
  }
}

/**
 * Removes finished tasks as they were read. A group's record is removed with the last of its tasks, before it: so a
 * record never outlives its tasks (a group submitted again under its name would count into it and never join), and
 * no task of the group is ever counted into a new record while the old one stands. A join is kept while the record
 * (or parent) it joins does not show it yet: a node died between creating it and marking the group, and the
 * group's last task, counted again later, would find no join and create a second one.
 */
async function removeFinished(store: TaskStore, tasks: readonly TaskRecord[], now: number): Promise<number> {
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
