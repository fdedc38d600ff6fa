import type { RecordCallOptions, RecordMap } from '../store/record-map';
import { MapHold } from '../store/map-hold';
import type { StoreBackend } from '../store/store-backend';
import { FINISHED_STATES, type TaskRecord, type TaskState } from '../store/tasks/task';
import { decodeTask } from '../store/tasks/task.codec';
import type { TaskStore } from '../store/tasks/task-store';
import { groupId } from './task-id.rules';

/** One end of a task move: its task store, and the backend it is on. */
export interface TaskMoveSide {
  readonly tasks: TaskStore;
  readonly backend: StoreBackend;
}

/** What a task move did. */
export interface TaskMoveReport {
  /** Tasks now on the store moved to and gone from the old one, by the state they moved in. */
  readonly moved: Readonly<Partial<Record<TaskState, number>>>;
  /** Tasks the store moved to had already (the same id submitted there): left there as they are, removed from the old store. */
  readonly alreadyThere: readonly string[];
  /**
   * Tasks still on the old store: a live node claimed, renewed, finished or submitted them while the move ran. Left
   * there; run the move again once the old nodes stopped.
   */
  readonly left: readonly string[];
}

/**
 * The record map, on the store moved to, that journals each task in flight between the stores: written before the
 * task leaves the old store, removed once it is on the new one, so a move cut short (the command killed between the
 * two writes) is finished by the next run rather than losing the task.
 */
export const TASK_MOVES_MAP = 'task-moves';

/** Tasks moved at once. */
const AT_ONCE = 16;

/**
 * Moving tasks from one store to another (`nestjs-gatekeeper store move tasks --finish`), once the nodes run on the
 * new store: every task of the old store goes over, never run by two holders at once. Each task is, in this order,
 * journaled on the new store, taken off the old store by a compare-and-set against exactly the text read (a task a
 * live node claimed, renewed or finished meanwhile stays where it is, reported), and created on the new store. A
 * running task moves with its claim: its node, on the old store, can no longer renew or finish it, and the new store's
 * nodes take it over once that claim lapsed, as after a crash (its expiry is on the claimer's clock, judged there as
 * on the old store). Pending, waiting and finished tasks move as they are, and the records of their groups where the
 * new store has none.
 */
export class TaskMove {
  constructor(
    private readonly from: TaskMoveSide,
    private readonly to: TaskMoveSide,
    private readonly bounds: { readonly timeoutMs: number },
  ) {}

  /** Moves every task of the old store (see the class). */
  async finish(): Promise<TaskMoveReport> {
    const options: RecordCallOptions = { timeoutMs: this.bounds.timeoutMs };
    const journalHold = new MapHold(this.to.backend, TASK_MOVES_MAP, 'store');
    const moved: Partial<Record<TaskState, number>> = {};
    const alreadyThere: string[] = [];
    const left: string[] = [];
    try {
      const journal = await journalHold.open();
      await this.resume(journal, options);
      const found = await this.from.tasks.query({}, options);
      // Before any task of a group arrives, so its nodes there count into the group's record.
      await this.copyGroups(found, options);
      // Several tasks at once (each one's steps in order): a backlog of thousands moves in a few store round trips each.
      for (let i = 0; i < found.length; i += AT_ONCE) {
        await Promise.all(found.slice(i, i + AT_ONCE).map(async (listed) => {
          const { task, raw } = await this.from.tasks.read(listed.id, options);
          if (!task || raw === null) return; // gone meanwhile: removed or purged there
          const outcome = await this.moveOne(journal, task, raw, options);
          if (outcome === 'moved') moved[task.state] = (moved[task.state] ?? 0) + 1;
          else if (outcome === 'already') alreadyThere.push(task.id);
          else left.push(task.id);
        }));
      }
      alreadyThere.sort();
      left.sort();
      // Whatever is on the old store now stayed or came since: a live node changed, submitted or submitted again it.
      const named = new Set(left);
      for (const task of await this.from.tasks.query({}, options)) if (!named.has(task.id)) left.push(task.id);
      return { moved, alreadyThere, left };
    } finally {
      await journalHold.close();
    }
  }

  /** Journals `task`, takes it off the old store if it is still exactly `raw`, then puts it on the new one. */
  private async moveOne(journal: RecordMap, task: TaskRecord, raw: string, options: RecordCallOptions): Promise<'moved' | 'already' | 'busy'> {
    await journal.put(task.id, raw, options);
    if (!(await this.from.tasks.compareAndSet(task.id, { raw }, null, options))) {
      // Changed since it was read: a live node claimed, renewed or finished it. It stays where it is.
      await journal.delete(task.id, options);
      return 'busy';
    }
    const created = await this.arrive(task, options);
    await journal.delete(task.id, options);
    return created ? 'moved' : 'already';
  }

  /**
   * Creates `task` on the new store: false when a task of its id is there already (the same id submitted on both
   * stores during the deploy: a trigger, a fixed id). That one is left as it is, unless it is still pending there
   * (held: `TaskMoveHold`) while `task` ran or runs: then `task` replaces it, as one store would have kept the one
   * task, so the id does not run again once it ran on the old store, and the new store's nodes wait for a claim the
   * old node may still hold rather than run it beside that node.
   */
  private async arrive(task: TaskRecord, options: RecordCallOptions): Promise<boolean> {
    if (await this.to.tasks.compareAndSet(task.id, { raw: null }, task, options)) return true;
    if ((task.state === 'running' && task.claim) || FINISHED_STATES.has(task.state)) {
      const there = await this.to.tasks.read(task.id, options);
      if (there.task?.state === 'pending') await this.to.tasks.compareAndSet(task.id, there, task, options);
    }
    return false;
  }

  /**
   * Finishes what an earlier run left in the journal: a task already gone from the old store is put on the new one; a
   * task still on the old store (the run stopped before taking it off) is left to this run's own pass.
   */
  private async resume(journal: RecordMap, options: RecordCallOptions): Promise<void> {
    for (const { key, value } of await journal.list(options)) {
      const there = await this.from.tasks.read(key, options);
      if (there.raw === null) await this.arrive(decodeTask(key, value), options);
      await journal.delete(key, options);
    }
  }

  /**
   * Copies the records of the moved tasks' groups the new store has none of (one it has is the newer: its nodes count
   * into it). Groups are read through the task stores, as every task store keeps them.
   */
  private async copyGroups(tasks: readonly TaskRecord[], options: RecordCallOptions): Promise<void> {
    const ids = new Set(tasks.flatMap((t) => (t.group ? [groupId(t.type, t.group.name)] : [])));
    for (const id of ids) {
      const { group } = await this.from.tasks.readGroup(id, options);
      if (group) await this.to.tasks.compareAndSetGroup(id, { raw: null }, group, options);
    }
  }
}
