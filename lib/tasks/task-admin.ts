import type { Clock } from '../core/clock';
import { FINISHED_STATES, type TaskRecord, type TaskState } from '../store/tasks/task';
import { TaskActionRefusedError } from './errors/task-action-refused.error';
import { removeFinished } from './task-purge';
import type { TaskQuery, TaskStore } from '../store/tasks/task-store';
import { decideReopen } from './task-group.rules';
import { groupId, groupJoinOf, joinTaskId } from './task-id.rules';
import { validateTaskGroup, validateTaskId, validateTaskQueryNames, type TaskPurgeOptions } from './task-admin.input';
import { decideCancel, decideRetry, isPurgeable } from './task-outcome.rules';
import { readDecideWrite } from '../store/read-decide-write';
import { groupSlot, taskSlot } from './task-slots';
import { unknownTask } from './errors/task.errors';

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
    validateTaskQueryNames(query);
    return (await this.store.query(query)).slice(0, limit);
  }

  /** One task with its attempts and errors, or `undefined`. */
  async get(id: string): Promise<TaskRecord | undefined> {
    return (await this.store.read(validateTaskId(id))).task;
  }

  /**
   * Retries a failed, invalid or cancelled task: pending again with a fresh budget of attempts. A grouped task's
   * group is reopened first (its end forgotten; a group that had joined starts a new round with a join of its own).
   */
  async retry(id: string): Promise<TaskRecord> {
    validateTaskId(id);
    const refuse = (task: TaskRecord) => new TaskActionRefusedError(id, 'retry', task.uncounted
      ? 'its group has not counted its end yet; try again in a moment'
      : `it is ${task.state} (only failed, invalid or cancelled tasks are retried)`);
    // Checked before its group is touched: a refused retry must leave the group's count as it is (its join depends on it).
    const first = await this.store.read(id);
    if (!first.task) throw unknownTask(id);
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
    return readDecideWrite(`retry task "${id}"`, taskSlot(this.store, id), (read) => {
      if (!read.task) throw unknownTask(id);
      const next = decideRetry(read.task, this.clock.now());
      if (!next) throw refuse(read.task);
      return { result: next, write: next };
    });
  }

  /** Cancels a pending or running task (a running handler learns it at its next renewal; its finish is rejected). */
  async cancel(id: string): Promise<TaskRecord> {
    validateTaskId(id);
    return readDecideWrite(`cancel task "${id}"`, taskSlot(this.store, id), (read) => {
      if (!read.task) throw unknownTask(id);
      const next = decideCancel(read.task, this.clock.now(), undefined, this.options.clockSkewMs ?? 500);
      if (!next) throw new TaskActionRefusedError(id, 'cancel', `it is ${read.task.state} already`);
      return { result: next, write: next };
    });
  }

  /**
   * Removes finished tasks (their ids are forgotten: a submit of one runs it again), and a group's record with the
   * last of its tasks. Tasks a group or parent still waits to hear of, joins their group does not show yet, and
   * cancelled runs whose lease may still be running are kept. Returns how many were removed.
   */
  async purge(options: TaskPurgeOptions = {}): Promise<number> {
    validateTaskQueryNames(options);
    const now = this.clock.now();
    const states = options.states ?? [...FINISHED_STATES];
    const candidates = await this.store.query({ ...(options.types && { types: options.types }), states });
    return removeFinished(this.store, candidates.filter((task) => isPurgeable(task, now, options.olderThanMs ?? 0, options.olderThanMs === undefined)), now);
  }

  /** A group's progress, or `undefined` when neither its record nor any of its tasks exists. */
  async group(type: string, name: string): Promise<TaskGroupStatus | undefined> {
    validateTaskGroup(type, name);
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
    return readDecideWrite(`reopen group "${id}"`, groupSlot(this.store, id), async (read) => {
      if (!read.group) return { result: false };
      if (!(String(task.group!.number) in read.group.finished)) return { result: true };
      // A join created for this round counts as submitted even if the group's mark was never written (its node died).
      const join = (await this.store.read(joinTaskId(task.type, task.group!.name))).task;
      const joined = read.group.joinSubmittedAt !== undefined || join?.joinOf === groupJoinOf(read.group);
      return { result: true, write: decideReopen(read.group, task.group!.number, joined) };
    });
  }
}
