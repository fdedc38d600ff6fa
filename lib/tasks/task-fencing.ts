import type { Clock } from '../core/clock';
import type { TaskRecord } from './task';
import { encodeTask } from './task.codec';
import type { FencedDecision, TaskActor } from './task-claim.rules';
import type { TaskStore, VersionedTask } from './task-store';
import { CONFLICT, retryOnConflict } from '../store/compare-and-set';

/**
 * Writes of a claim (renew, finish, hand back), each only while the claim's epoch is still this node's, and the
 * read-back that tells a write whose answer was lost from one that never landed.
 */
export class TaskFencing {
  constructor(
    private readonly store: TaskStore,
    private readonly actor: TaskActor,
    private readonly clock: Clock,
  ) {}

  /**
   * A decide-compare-and-set on the task, only while the claim `epoch` is still this node's: first against `known`
   * (what this run last wrote), then, if the task changed since, against what a read finds.
   */
  async fenced(
    id: string,
    epoch: number,
    decide: (task: TaskRecord, now: number) => FencedDecision,
    known?: VersionedTask,
    checkClaim = false,
  ): Promise<FencedDecision> {
    let guess = known;
    return retryOnConflict(`write task "${id}" under claim ${epoch}`, async () => {
      const read: VersionedTask = guess ?? (await this.store.read(id));
      guess = undefined;
      if (!read.task) return { outcome: 'lease-lost', message: `task ${id} is gone` };
      if (checkClaim && (read.task.claim?.epoch !== epoch || read.task.claim.instance !== this.actor.instance)) {
        return { outcome: 'lease-lost', message: `task ${id} is no longer held under epoch ${epoch}` };
      }
      const decision = decide(read.task, this.clock.now());
      if (decision.outcome !== 'ok') return decision;
      try {
        if (await this.store.compareAndSet(id, read, decision.task)) return decision;
      } catch (error) {
        // The answer was lost: the write may have landed. The exact value written means it did; anything else is
        // decided on again (a claim lost since is refused then).
        const back = await this.readBack(id);
        if (!back) throw error;
        if (back.raw === encodeTask(decision.task)) return decision;
        guess = back;
      }
      return CONFLICT;
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
