import { FINISHED_STATES, type BackoffPolicy, type TaskRecord } from '../store/tasks/task';
import { DEFAULT_MAX_ATTEMPTS, endAttempt, fence, type FencedDecision, type TaskActor } from './task-claim.rules';
import { withCounting } from './task-group.rules';
import { awaitsJoins } from '../store/tasks/task-store.rules';

/*
 * How a claimed task's run ends (seed 004), pure: finished, retried after its backoff, failed, invalid or cancelled,
 * every write fenced by the claim's epoch; then an operator's retry, and when a finished task may be purged.
 */

/** How a handler's run ended. */
export type TaskOutcome =
  | { readonly kind: 'done'; readonly result?: unknown }
  | { readonly kind: 'retry'; readonly error: string; readonly delayMs?: number }
  | { readonly kind: 'failed'; readonly error: string }
  | { readonly kind: 'invalid'; readonly error: string };

/** How a finishing run ended and what it started: the handler's outcome and the sub-groups it submitted tasks in. */
export interface RunEnd {
  readonly outcome: TaskOutcome;
  /** Ids (`<type>:<group>`) of the groups the run submitted sub-tasks in. */
  readonly subgroups?: readonly string[];
}

/**
 * Records how the claim `epoch` ended, only if it is still the task's claim (a handler that lost its lease can
 * never complete or fail a task another node claimed since): `done` stores the result; `failed` and `retry` go back
 * to pending after the backoff (a retry's own delay if it gave one) while attempts are left (the task's
 * `maxAttempts`, else `handlerMaxAttempts`), else the task fails; `invalid` is final at once. A finish by the
 * holder is accepted even past its lease, as long as no one claimed the task since: its work was done, and nobody
 * else started it. The sub-groups the run submitted are added to the task's, for its own join.
 */
export function decideFinish(
  task: TaskRecord, actor: TaskActor, epoch: number, end: RunEnd | TaskOutcome, now: number, backoff: BackoffPolicy, handlerMaxAttempts = DEFAULT_MAX_ATTEMPTS,
): FencedDecision {
  const lost = fence(task, actor, epoch);
  if (lost) return lost;
  const { outcome, subgroups = [] } = 'kind' in end ? { outcome: end } : end;
  const { claim: _claim, ...base } = task;
  const submitted = [...new Set([...(task.subgroups?.submitted ?? []), ...subgroups])];
  const rest: TaskRecord = submitted.length ? { ...base, subgroups: { joined: {}, ...task.subgroups, submitted } } : base;
  if (outcome.kind === 'done') {
    return { outcome: 'ok', task: withCounting({ ...rest, state: 'done', result: outcome.result ?? null, finishedAt: now, attempts: endAttempt(task.attempts, epoch, now, 'done') }) };
  }
  if (outcome.kind === 'invalid') {
    return { outcome: 'ok', task: withCounting({ ...rest, state: 'invalid', finishedAt: now, attempts: endAttempt(task.attempts, epoch, now, 'invalid', outcome.error) }) };
  }
  const attempts = endAttempt(task.attempts, epoch, now, outcome.kind === 'retry' ? 'retry' : 'failed', outcome.error);
  if (attempts.length >= (task.maxAttempts ?? handlerMaxAttempts)) return { outcome: 'ok', task: withCounting({ ...rest, state: 'failed', finishedAt: now, attempts }) };
  const delay = outcome.kind === 'retry' && outcome.delayMs !== undefined ? outcome.delayMs : backoffDelay(attempts.length, backoff);
  return { outcome: 'ok', task: { ...rest, state: 'pending', notBefore: now + delay, attempts } };
}

/**
 * A cancel (an operator's, or its group's stop at a failure, named by `reason`): a task not finished is cancelled (a
 * running handler learns it at its next renewal, so the task is held until its lease's end plus the skew bound).
 */
export function decideCancel(task: TaskRecord, now: number, reason = 'cancelled by an operator', skewMs = 0): TaskRecord | undefined {
  if (FINISHED_STATES.has(task.state)) return undefined;
  const { claim: _claim, ...rest } = task;
  if (!task.claim) return withCounting({ ...rest, state: 'cancelled', finishedAt: now });
  return withCounting({
    ...rest, state: 'cancelled', finishedAt: now, heldUntil: task.claim.expiresAt + skewMs, attempts: endAttempt(task.attempts, task.claim.epoch, now, 'cancelled', reason),
  });
}

/**
 * An operator's retry of a failed, invalid or cancelled task: pending again, with a fresh budget of attempts. A
 * task not yet counted into its group is not retried (its group would miss the first end); retry it a moment later.
 */
export function decideRetry(task: TaskRecord, now: number, handlerMaxAttempts = DEFAULT_MAX_ATTEMPTS): TaskRecord | undefined {
  if ((task.state !== 'failed' && task.state !== 'invalid' && task.state !== 'cancelled') || task.uncounted) return undefined;
  const { finishedAt: _f, result: _r, subgroups, ...rest } = task;
  // The sub-groups already submitted and joined are kept (a run submitting them again finds them); the mark of the
  // earlier run's join is not, so this run gets a join of its own.
  const { joinSubmittedAt: _j, ...progress } = subgroups ?? { joined: {} };
  return {
    ...rest, ...(subgroups && { subgroups: progress }), state: 'pending', notBefore: Math.max(now, task.heldUntil ?? now),
    maxAttempts: task.attempts.length + (task.maxAttempts ?? handlerMaxAttempts),
  };
}

/**
 * Whether a finished task may be removed at `now`: its retention window is over (or `force`, an operator's purge)
 * and no group or parent still waits to hear of its end.
 */
export function isPurgeable(task: TaskRecord, now: number, retentionMs: number, force = false): boolean {
  if (task.heldUntil !== undefined && task.heldUntil > now) return false; // its cancelled run may still be running: its id must stay taken
  return FINISHED_STATES.has(task.state) && !task.uncounted && !awaitsJoins(task) && (force || (task.finishedAt ?? now) + retentionMs <= now);
}

/** The delay before attempt `attempt + 1` after `attempt` failed. */
export function backoffDelay(attempt: number, { baseMs, factor, maxMs }: BackoffPolicy): number {
  return Math.min(maxMs, Math.round(baseMs * factor ** Math.max(0, attempt - 1)));
}
