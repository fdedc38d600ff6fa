import { FINISHED_STATES, type TaskAttempt, type TaskClaim, type TaskRecord } from '../store/tasks/task';
import { withCounting } from './task-group.rules';
import type { ReserveClaim } from '../store/tasks/task-store';

/*
 * Claims and the leases they hold (seed 004), pure: everything they need is passed in. `skewMs` is the bound on clock
 * disagreement: another node counts a claim as live until its expiry plus the skew, and its holder stops vouching for
 * it at its expiry minus the skew, so a lapsed claim is taken over only once its holder can no longer believe in it.
 * Every later write of a claim is fenced by its epoch (see `fence`).
 */

/** Attempts of a task whose submit and handler named none. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** Who acts: an instance and its acquirer name. */
export interface TaskActor {
  readonly instance: string;
  readonly acquirer: string;
}

/** Why a task cannot be claimed now. */
export type ClaimRefusal = 'finished' | 'backing-off' | 'held';

/** The outcome of a claim. */
export type ClaimDecision =
  | { readonly outcome: 'claimed'; readonly task: TaskRecord; readonly claim: TaskClaim }
  | { readonly outcome: 'refused'; readonly reason: ClaimRefusal }
  /** Its lease lapsed once too often: the task fails instead (write `task`, then tell its group). */
  | { readonly outcome: 'exhausted'; readonly task: TaskRecord };

/**
 * Claims a task for `actor`: a pending task whose backoff is over, or a running one whose claim lapsed for every
 * node (its expiry plus the skew bound: the abandoned attempt is recorded as `lapsed`). The claim's epoch is above
 * every earlier one of the task and at least the clock in µs (plus the skew bound), so it grows even across a purge.
 * A lapsed attempt counts toward `maxAttempts` (the task's, else `handlerMaxAttempts`), as a failure does: a task
 * that kills its node every time fails after that many, instead of taking down one node after another.
 */
export function decideClaim(task: TaskRecord, actor: TaskActor, now: number, leaseMs: number, skewMs = 0, handlerMaxAttempts = DEFAULT_MAX_ATTEMPTS): ClaimDecision {
  if (FINISHED_STATES.has(task.state)) return { outcome: 'refused', reason: 'finished' };
  if (task.state === 'running' && task.claim && task.claim.expiresAt + skewMs > now) return { outcome: 'refused', reason: 'held' };
  if (task.state === 'pending' && task.notBefore > now) return { outcome: 'refused', reason: 'backing-off' };
  if (task.heldUntil !== undefined && task.heldUntil > now) return { outcome: 'refused', reason: 'held' }; // a cancelled run's lease
  const attempts = task.state === 'running' ? endAttempt(task.attempts, task.claim?.epoch, now, 'lapsed', 'its lease lapsed: the node stopped renewing') : task.attempts;
  if (task.state === 'running' && attempts.length >= (task.maxAttempts ?? handlerMaxAttempts)) {
    const { claim: _claim, ...rest } = task;
    return { outcome: 'exhausted', task: withCounting({ ...rest, state: 'failed', finishedAt: now, attempts }) };
  }
  const epoch = Math.max(task.epoch + 1, epochFloor(now, skewMs));
  const claim: TaskClaim = { instance: actor.instance, acquirer: actor.acquirer, epoch, claimedAt: now, expiresAt: now + leaseMs };
  const attempt: TaskAttempt = { attempt: attempts.length + 1, epoch, instance: actor.instance, acquirer: actor.acquirer, startedAt: now };
  const { heldUntil: _h, ...claimable } = task;
  return { outcome: 'claimed', claim, task: { ...claimable, state: 'running', epoch, claim, attempts: [...attempts, attempt] } };
}

/** The least epoch a claim made at `now` takes: the clock in µs plus the skew bound, so epochs grow even across a purge. */
function epochFloor(now: number, skewMs: number): number {
  return Math.floor(now + skewMs) * 1000;
}

/**
 * The terms on which a store that claims natively claims a task never claimed (see `TaskStore.reserve`): exactly
 * what {@link decideClaim} gives such a task at `now` (epoch 0 below the floor), per type with its lease. `calls`:
 * the epoch of the node's last such call (`last`: this one's is above it, so each call is named by its epoch even
 * within one millisecond) and of one whose answer was lost (`again`).
 */
export function claimTerms(actor: TaskActor, now: number, leaseMs: ReadonlyMap<string, number>, skewMs = 0, calls: { readonly last?: number; readonly again?: number } = {}): ReserveClaim {
  const expiresAt = new Map<string, number>();
  for (const [type, lease] of leaseMs) expiresAt.set(type, now + lease);
  const epoch = Math.max(1, epochFloor(now, skewMs), (calls.last ?? 0) + 1);
  return { acquirer: actor.acquirer, claimedAt: now, epoch, expiresAt, ...(calls.again !== undefined && { again: calls.again }) };
}

/** The outcome of a fenced write (renew, finish): done, or the claim is no longer this one. */
export type FencedDecision = { readonly outcome: 'ok'; readonly task: TaskRecord } | { readonly outcome: 'lease-lost'; readonly message: string };

/**
 * Renews the claim `epoch` of `actor` for `leaseMs` from now, only while it still holds by the holder's own clock
 * (expiry minus the skew bound): past that, another node may already have claimed the task.
 */
export function decideRenew(task: TaskRecord, actor: TaskActor, epoch: number, now: number, leaseMs: number, skewMs = 0): FencedDecision {
  const lost = fence(task, actor, epoch);
  if (lost) return lost;
  if (task.claim!.expiresAt - skewMs <= now) return { outcome: 'lease-lost', message: `the lease of task ${task.id} (epoch ${epoch}) ran out before it was renewed` };
  return { outcome: 'ok', task: { ...task, claim: { ...task.claim!, expiresAt: now + leaseMs } } };
}

/** Refuses a write of the claim `epoch` once it is no longer `actor`'s: a handler that lost its lease writes nothing. */
export function fence(task: TaskRecord, actor: TaskActor, epoch: number): FencedDecision | undefined {
  if (task.state !== 'running' || !task.claim || task.claim.epoch !== epoch || task.claim.instance !== actor.instance) {
    const now = task.claim ? `claimed by ${task.claim.acquirer} with epoch ${task.claim.epoch}` : task.state;
    return { outcome: 'lease-lost', message: `task ${task.id} is no longer held under epoch ${epoch} (now ${now})` };
  }
  return undefined;
}

/** The attempts with the one of claim `epoch` ended as `outcome` (the others as they are). */
export function endAttempt(attempts: readonly TaskAttempt[], epoch: number | undefined, now: number, outcome: TaskAttempt['outcome'], error?: string): TaskAttempt[] {
  return attempts.map((a) => (a.epoch === epoch && a.endedAt === undefined ? { ...a, endedAt: now, outcome, ...(error !== undefined && { error }) } : a));
}
