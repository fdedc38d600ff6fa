import { earliestOf } from '../store/store-clock';
import { isUnknownOutcome } from '../store/unknown-outcome';
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
 * trip (a task changed since simply fails the compare). Settles a lost answer by reading the task back, and hands
 * back a claim whose answer came too late to vouch. A task out of attempts is marked so on the way.
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
    let landed: boolean;
    try {
      landed = await this.store.compareAndSet(found.id, read, decision.task);
    } catch (error) {
      // The answer was lost: the claim may have landed. If the task is held under this claim, run it now rather than
      // leave it to lapse (and use up an attempt). Only an unknown outcome is settled (the one rule of lib/store).
      if (!isUnknownOutcome(error)) throw error;
      const again = await this.fencing.readBack(found.id);
      landed = again?.task?.claim?.epoch === decision.claim.epoch && again.task.claim.instance === this.actor.instance;
      if (!landed) throw error;
    }
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
