import { FINISHED_STATES, type GroupJoinData, type TaskRecord } from '../store/tasks/task';
import { compareReady } from '../store/tasks/task-store.rules';
import { counted, decideGroupProgress, decideParentJoin, groupEnd, groupStoppedFast, joinTask, newGroupRecord, recordSubgroupJoin } from './task-group.rules';
import { groupId, joinedType, joinIdOf } from './task-id.rules';
import { decideCancel } from './task-outcome.rules';
import type { TaskStore } from '../store/tasks/task-store';
import type { TaskWorkerOptions } from './task-worker.options';
import { CONFLICT } from '../store/compare-and-set';
import { readDecideWrite } from '../store/read-decide-write';
import { groupSlot, taskSlot } from './task-slots';

/** Stragglers one scan reads (the Hazelcast store transfers every match anyway), and how many it counts. */
export const STRAGGLERS_READ = 5_000;
const STRAGGLERS_PER_PASS = 50;

/**
 * Groups and joins on one node: a finished task is counted into its group (or its parent), the write that finds the
 * group finished creates the join, once, and a group that stopped at a failure has the rest of its tasks cancelled.
 * Tasks whose node died before they were counted are counted by whichever node's scan finds them.
 */
export class TaskGroups {
  /** A straggler scan in progress (scans never overlap). */
  private counting = false;
  /** The last straggler a scan took: the next scan goes on after it. */
  private lastStraggler?: TaskRecord;

  constructor(
    private readonly store: TaskStore,
    private readonly options: TaskWorkerOptions,
  ) {}

  /**
   * Grouped tasks of `types` that finished but were never counted into their group (their node died in between):
   * counted now, by whichever node's scan finds them, so every group gets its join.
   */
  async countStragglers(types: readonly string[]): Promise<void> {
    if (this.counting) return;
    await this.countFound(await this.store.uncounted([...types], STRAGGLERS_READ));
  }

  /**
   * Counts stragglers a query found (at most {@link STRAGGLERS_READ} of them, in claim order: see `TaskStore.uncounted`),
   * unless a count is under way (it found them too).
   */
  async countFound(found: readonly TaskRecord[]): Promise<void> {
    if (this.counting) return;
    this.counting = true;
    try {
      // A pass takes up to STRAGGLERS_PER_PASS, after the last one the previous pass took (claim order, wrapping): the
      // first ones may be blocked for long (a join of an earlier round not run yet), and must not hide the rest.
      const last = this.lastStraggler;
      const from = last ? found.findIndex((task) => compareReady(task, last) > 0) : 0;
      const pass = [...found.slice(Math.max(from, 0)), ...found.slice(0, Math.max(from, 0))].slice(0, STRAGGLERS_PER_PASS);
      for (const task of pass) {
        this.lastStraggler = task;
        await this.progress(task).catch((error) => this.options.onError?.(error, `count ${task.id}`)); // one bad record blocks no other
      }
    } finally {
      this.counting = false;
    }
  }

  /**
   * Tells a group or parent of a finished task's end (idempotent: telling it again changes nothing), then clears the
   * task's mark; the write that finds the group (or parent) finished submits its join, once. A join that must wait
   * (a join of an earlier round or run still holds its id) leaves the mark, and a later scan tries again.
   */
  async progress(task: TaskRecord): Promise<void> {
    if (task.group && !(await this.countInGroup(task))) return;
    if (!task.group && joinedType(task.type) !== undefined && task.parent) await this.joinParent(task);
    if (decideParentJoin(task, 0) && !(await this.submitParentJoin(task.id))) return;
    await readDecideWrite(`clear the count mark of task "${task.id}"`, taskSlot(this.store, task.id), (read) => {
      // Only the run that was counted: a later run (an operator's retry) keeps its own mark.
      if (!read.task?.uncounted || read.task.finishedAt !== task.finishedAt) return { result: undefined };
      return { result: undefined, write: counted(read.task) };
    });
  }

  /** Counts a grouped task into its group's record; false when its group's join has to wait (see `createJoin`). */
  private async countInGroup(task: TaskRecord): Promise<boolean> {
    const id = groupId(task.type, task.group!.name);
    const counting = await readDecideWrite(`count task "${task.id}" into group "${id}"`, groupSlot(this.store, id), async (read) => {
      const progress = decideGroupProgress(read.group, task, this.options.clock.now());
      if (!read.group) {
        // The record is created empty first: its generation (which its joins name) is then the one every node
        // reads, never one a node made up and lost to another's create.
        await this.store.compareAndSetGroup(id, read, newGroupRecord(task));
        return CONFLICT;
      }
      const same = JSON.stringify(read.group.finished[String(task.group!.number)]) === JSON.stringify(progress.group.finished[String(task.group!.number)]);
      // Counted already (a write whose answer was lost, a node that died after it): the stop may not have been.
      if (same && !progress.join && progress.group.round === read.group.round) return { result: { group: read.group, cancel: progress.cancel } };
      // The join first (its id is one per group, so creating it twice makes one task), then the mark on the group:
      // a group marked joined always has its join, whatever fails in between.
      if (progress.join && !(await this.createJoin(progress.join, progress.joinOf!, progress.group.parent))) return { result: undefined };
      return { result: { group: progress.group, cancel: progress.cancel }, write: progress.group };
    });
    if (!counting) return false;
    if (groupStoppedFast(counting.group)) await this.stopGroup(task, counting.cancel);
    return true;
  }

  /** The rest of a group that stopped at a failure: every task of it not ended yet, whether or not the total is known. */
  private async stopGroup(task: TaskRecord, numbers: readonly number[]): Promise<void> {
    // Still stopped now (an operator's retry may have reopened it since it was read): else nothing is cancelled.
    if (!groupStoppedFast((await this.store.readGroup(groupId(task.type, task.group!.name))).group)) return;
    const waiting = (await this.store.query({ types: [task.type], group: task.group!.name })).filter((t) => !FINISHED_STATES.has(t.state)).map((t) => t.id);
    const numbered = numbers.map((number) => `${task.type}:${task.group!.name}:${number}`);
    for (const other of new Set([...waiting, ...numbered])) await this.cancel(other, stoppedGroupReason(task));
  }

  /**
   * A join of one of a parent's sub-groups ended: the parent records it, and the write that finds the parent
   * finished with every sub-group joined submits the parent's own join (created first, so it is never lost). If that
   * join has to wait, the parent is marked instead (`uncounted`), and a scan submits it later.
   */
  private async joinParent(join: TaskRecord): Promise<void> {
    const data = join.data as GroupJoinData;
    const id = groupId(data.type, data.group);
    await readDecideWrite(`record join "${join.id}" in parent "${join.parent}"`, taskSlot(this.store, join.parent!), async (read) => {
      if (!read.task) return { result: undefined }; // the parent was purged: nobody waits for this
      if (JSON.stringify(read.task.subgroups?.joined[id]) === JSON.stringify(groupEnd(join))) return { result: undefined }; // recorded already
      const recorded = recordSubgroupJoin(read.task, id, groupEnd(join));
      const due = decideParentJoin(recorded, this.options.clock.now());
      const created = due ? await this.createJoin(due.join, due.joinOf, undefined) : false;
      return { result: undefined, write: !due ? recorded : created ? due.parent : { ...recorded, uncounted: true as const } };
    });
  }

  /** A parent finished after all its sub-groups joined: its own join, once (created before the mark); false if it has to wait. */
  private async submitParentJoin(id: string): Promise<boolean> {
    return readDecideWrite(`submit the join of parent "${id}"`, taskSlot(this.store, id), async (read) => {
      const due = read.task && decideParentJoin(read.task, this.options.clock.now());
      if (!due) return { result: true };
      if (!(await this.createJoin(due.join, due.joinOf, undefined))) return { result: false };
      return { result: true, write: counted(due.parent) };
    });
  }

  /**
   * Creates a join unless it is there already (one id per group: idempotent), replacing a finished join of an
   * earlier round, group or run. False when that earlier join has not finished (or not been counted) yet: the caller
   * keeps its mark, and the join is created by a later scan, after the earlier one.
   */
  private async createJoin(join: GroupJoinData, joinOf: string, parent: string | undefined): Promise<boolean> {
    const id = joinIdOf(join, joinOf);
    return readDecideWrite(`create join "${id}"`, taskSlot(this.store, id), (read) => {
      const decision = joinTask(join, joinOf, parent, this.options.clock.now(), read.task);
      if (decision.outcome === 'exists') return { result: true };
      if (decision.outcome === 'blocked') return { result: false };
      return { result: true, write: decision.task };
    });
  }

  /**
   * Whether `found`, about to be claimed, belongs to a fail-fast group that stopped already; if so it is cancelled
   * where it waits, not run. The group's stop cancels the rest one by one after its join is created, and a slot freed
   * meanwhile must not start one of them: only fail-fast groups pay this one read.
   */
  async cancelIfStopped(found: TaskRecord): Promise<boolean> {
    if (!(await stoppedFast(this.store, found))) return false;
    await this.cancel(found.id, stoppedGroupReason(found));
    return true;
  }

  /** Cancels a task of a group that stopped at a failure, unless it finished (`reason` goes on its attempt). */
  private async cancel(id: string, reason: string): Promise<void> {
    await readDecideWrite(`cancel task "${id}"`, taskSlot(this.store, id), (read) => {
      const next = read.task && decideCancel(read.task, this.options.clock.now(), reason, this.options.clockSkewMs);
      return next ? { result: undefined, write: next } : { result: undefined };
    });
  }
}

/**
 * Whether `task`'s group asked to fail fast and stopped at a failure already: such a task is not run, at its submit or
 * its claim. One read, only for groups that asked to fail fast.
 */
export async function stoppedFast(store: TaskStore, task: Pick<TaskRecord, 'type' | 'group'>): Promise<boolean> {
  if (!task.group?.failGroupFast) return false;
  return groupStoppedFast((await store.readGroup(groupId(task.type, task.group.name))).group);
}

/** Why a task of a fail-fast group that stopped is cancelled (on its attempt, when it had one). */
function stoppedGroupReason(task: TaskRecord): string {
  return `its group ${groupId(task.type, task.group!.name)} stopped at a failure (failGroupFast)`;
}
