import { earliestOf } from '../store/store-clock';
import { WriteConflictError } from '../core/errors/write-conflict.error';
import { readDecideWrite } from '../store/read-decide-write';
import type { TaskRecord } from '../store/tasks/task';
import { encodeTask } from '../store/tasks/task.codec';
import { decideClaim, type ClaimDecision, type TaskActor } from './task-claim.rules';
import type { TaskFencing } from './task-fencing';
import type { TaskGroups } from './task-groups';
import type { Registration } from './task-handler';
import type { TaskOutcomes } from './task-outcomes';
import type { TaskStore, VersionedTask } from '../store/tasks/task-store';
import type { TaskWorkerOptions } from './task-worker.options';

/** A claim that landed and still vouches: the task as claimed, to run now. */
export type LandedClaim = Extract<ClaimDecision, { outcome: 'claimed' }>;

/**
 * One claim of one task, against the task as the claim loop found it: decided, then compare-and-set in one round
 * trip (a task changed since simply fails the compare), in the one read-decide-write, which settles a lost answer by
 * reading the task back. Hands back a claim whose answer came too late to vouch. A task out of attempts is marked so on the way.
 */
export class ClaimAttempts {
  constructor(
    private readonly store: TaskStore,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
    private readonly outcomes: TaskOutcomes,
    private readonly groups: TaskGroups,
    private readonly fencing: TaskFencing,
  ) {}

  /** Claims `found` under `registration`; the claim if it landed and its lease still vouches, else `undefined`. */
  async claim(found: TaskRecord, registration: Registration): Promise<LandedClaim | undefined> {
    if (await this.groups.cancelIfStopped(found)) return undefined;
    const read: VersionedTask = { task: found, raw: encodeTask(found) };
    // Decided on the earliest the time can be (see `earliestOf`): another's claim is taken as lapsed only once it surely has.
    const decision = decideClaim(found, this.actor, earliestOf(this.options.clock), registration.leaseMs, this.options.clockSkewMs, registration.maxAttempts);
    if (decision.outcome === 'exhausted') {
      if (await this.store.compareAndSet(found.id, read, decision.task)) await this.groups.progress(decision.task);
      return undefined;
    }
    if (decision.outcome !== 'claimed') return undefined;
    // One compare-and-set (a task changed since simply fails it), in the one read-decide-write: an answer that was
    // lost is settled by reading the task back, and a claim found there (its epoch is this claim's alone) runs now
    // rather than lapse and use up an attempt.
    const landed = await readDecideWrite(`claim task "${found.id}"`, this.fencing.settledSlot(found.id), () => ({ result: true, write: decision.task }), { known: read, attempts: 1 })
      .catch((error: unknown) => {
        if (error instanceof WriteConflictError) return false;
        throw error;
      });
    if (!landed) return undefined;
    return (await this.vouches(decision.task)) ? decision : undefined;
  }

  /**
   * Whether `claimed` (a claim of this node that landed) may run: the answer may come back late (a pause, a slow
   * link), and a claim whose lease no longer vouches by this node's clock may be another node's already, so it is
   * never run; it is handed back, fenced by its epoch (a no-op if taken).
   */
  async vouches(claimed: TaskRecord): Promise<boolean> {
    if (claimed.claim!.expiresAt - this.options.clockSkewMs > this.options.clock.now()) return true;
    await this.outcomes.handBack(claimed.id, claimed.claim!.epoch, { task: claimed, raw: encodeTask(claimed) }).catch((error) => this.options.onError?.(error, `hand back ${claimed.id}`));
    return false;
  }
}
