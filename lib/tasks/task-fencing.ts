import type { Clock } from '../core/clock';
import type { TaskRecord } from '../store/tasks/task';
import type { FencedDecision, TaskActor } from './task-claim.rules';
import type { TaskStore, VersionedTask } from '../store/tasks/task-store';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { readDecideWrite } from '../store/read-decide-write';
import { taskSlot, transactionTaskSlot } from './task-slots';
import { invalidTaskInput } from '../core/errors/input.errors';
import type { SqlTransaction } from '../store/sql-transaction';
import { encodeTask } from '../store/tasks/task.codec';

/**
 * Writes of a claim (renew, finish, hand back), each only while the claim's epoch is still this node's, and the
 * patient read-back that tells a write whose answer was lost from one that never landed.
 */
export class TaskFencing {
  constructor(
    private readonly store: TaskStore,
    private readonly actor: TaskActor,
    private readonly clock: Clock,
  ) {}

  /**
   * A decide-compare-and-set on the task, only while the claim `epoch` is still this node's: first against `known`
   * (what this run last wrote), then, if the task changed since, against what a read finds. A write whose answer was
   * lost is settled by {@link TaskFencing.readBack}: the exact value written means it landed; anything else is decided
   * on again (a claim lost since is refused then).
   */
  async fenced(
    id: string,
    epoch: number,
    decide: (task: TaskRecord, now: number) => FencedDecision,
    known?: VersionedTask,
    checkClaim = false,
  ): Promise<FencedDecision> {
    const slot = this.settledSlot(id);
    return readDecideWrite<VersionedTask, TaskRecord | null, FencedDecision>(`write task "${id}" under claim ${epoch}`, slot, (read) => {
      if (!read.task) return { result: { outcome: 'lease-lost', message: `task ${id} is gone` } };
      if (checkClaim && (read.task.claim?.epoch !== epoch || read.task.claim.instance !== this.actor.instance)) {
        return { result: { outcome: 'lease-lost', message: `task ${id} is no longer held under epoch ${epoch}` } };
      }
      const decision = decide(read.task, this.clock.now());
      return decision.outcome === 'ok' ? { result: decision, write: decision.task } : { result: decision };
    }, { ...(known && { known }) });
  }

  /**
   * {@link TaskFencing.fenced} inside the application's own transaction (the PostgreSQL store): the decision written
   * with the caller's rows, so it commits with them or not at all, first against `known`, then against what the
   * transaction finds there. Answers the decision and, when one was written, its text. A store that cannot write in a
   * transaction throws `InvalidInputError` naming the field.
   */
  async fencedIn(
    transaction: SqlTransaction,
    id: string,
    epoch: number,
    decide: (task: TaskRecord, now: number) => FencedDecision,
    known: VersionedTask,
  ): Promise<{ decision: FencedDecision; raw?: string }> {
    const write = this.store.writeInTransaction;
    if (!write) throw invalidTaskInput(id, 'transaction', 'a task is completed in your transaction on the PostgreSQL backend only');
    const { slot, options } = transactionTaskSlot(this.store, write, transaction, id, known);
    return readDecideWrite<VersionedTask, string, { decision: FencedDecision; raw?: string }>(`complete task "${id}" under claim ${epoch} in a transaction`, slot, (read) => {
      if (!read.task) return { result: { decision: { outcome: 'lease-lost', message: `task ${id} is gone` } } };
      const decision = decide(read.task, this.clock.now());
      if (decision.outcome !== 'ok') return { result: { decision } };
      const raw = encodeTask(decision.task);
      return { result: { decision, raw }, write: raw };
    }, options);
  }

  /**
   * The task's slot of the one read-decide-write, a lost answer settled by {@link TaskFencing.readBack} (a read that
   * still fails leaves the write's outcome unknown, and its error is thrown).
   */
  settledSlot(id: string): ReturnType<typeof taskSlot> {
    return taskSlot(this.store, id, async () => {
      const back = await this.readBack(id);
      if (!back) throw new StoreUnavailableError(`task ${id} could not be read back`);
      return back;
    });
  }

  /** Reads a task after a call whose answer was lost, a few times over about two seconds; `undefined` if it cannot. */
  async readBack(id: string): Promise<VersionedTask | undefined> {
    for (let attempt = 0, waitMs = 100; attempt < 5; attempt++, waitMs *= 2) {
      try {
        return await this.store.read(id);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      }
    }
    return undefined;
  }
}
