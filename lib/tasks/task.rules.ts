import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import {
  FINISHED_STATES, GROUP_FINISHED, type BackoffPolicy, type GroupEnd, type GroupJoinData, type TaskAttempt, type TaskClaim,
  type TaskGroupRecord, type TaskIdentity, type TaskRecord,
} from './task';

/** Attempts of a task whose submit and handler named none. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/*
 * The task rules (seed 004), pure: everything they need is passed in. `skewMs` is the bound on clock disagreement:
 * another node counts a claim as live until its expiry plus the skew, and its holder stops vouching for it at its
 * expiry minus the skew, so a lapsed claim is taken over only once its holder can no longer believe in it.
 */

/** Who acts: an instance and its acquirer name. */
export interface TaskActor {
  readonly instance: string;
  readonly acquirer: string;
}

const ID_PART = /^[^:#\s][^:#]*$/;

/** The id of a task: `<type>:<name>` or `<type>:<group>:<number>`. Throws naming the bad part. */
export function taskId(identity: TaskIdentity): string {
  const { type, name, group } = identity;
  const check = (field: string, value: unknown) => {
    if (typeof value !== 'string' || !ID_PART.test(value) || value.length > 200) {
      throw new InvalidDefinitionError(`<task ${String(type)}>`, field, `must be a non-empty string without ':' or '#' of at most 200 characters, got ${JSON.stringify(value)}`);
    }
  };
  check('type', type);
  if ((name === undefined) === (group === undefined)) throw new InvalidDefinitionError(`<task ${type}>`, 'name', 'give either a name (a single task) or a group position');
  if (name !== undefined) {
    // A name may hold ':' (a trigger time): the type, before the first ':', never does.
    if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
      throw new InvalidDefinitionError(`<task ${type}>`, 'name', `must be a non-empty string of at most 200 characters, got ${JSON.stringify(name)}`);
    }
    return `${type}:${name}`;
  }
  check('group.name', group!.name);
  if (!Number.isSafeInteger(group!.number) || group!.number < 1) {
    throw new InvalidDefinitionError(`<task ${type}>`, 'group.number', `must be a whole number, 1 or more, got ${JSON.stringify(group!.number)}`);
  }
  if (group!.total !== undefined && (!Number.isSafeInteger(group!.total) || group!.total < group!.number)) {
    throw new InvalidDefinitionError(`<task ${type}>`, 'group.total', `must be a whole number, at least the task's number (${group!.number}), got ${JSON.stringify(group!.total)}`);
  }
  return `${type}:${group!.name}:${group!.number}`;
}

/** The id of a group's record: `<type>:<group>`. */
export function groupId(type: string, group: string): string {
  return `${type}:${group}`;
}

/**
 * The type of the join (group-finished) tasks of `type`: claimed only by nodes with a group-finished handler for
 * `type`, which may differ from those that run its tasks.
 */
export function joinTaskType(type: string): string {
  return `${type}#${GROUP_FINISHED}`;
}

/** The id of a group's join task: `<type>#group-finished:<group>` (one per group, so its submit is idempotent). */
export function joinTaskId(type: string, group: string): string {
  return `${joinTaskType(type)}:${group}`;
}

const PARENT_JOIN = 'parent ';

/** Whether `joinOf` names a parent run (its own join), not a group round. */
export function isParentJoin(joinOf: string | undefined): boolean {
  return joinOf?.startsWith(PARENT_JOIN) ?? false;
}

/**
 * The id of a parent task's own join, heard once all its sub-groups joined: `<type>#group-finished:parent:<name>`
 * for the parent `<type>:<name>`. A group's name holds no ':', so a parent's join never shares its id with a group's,
 * whatever the parent is called.
 */
export function parentJoinTaskId(type: string, name: string): string {
  return `${joinTaskType(type)}:parent:${name}`;
}

/** The id of the join that `joinOf` names (see `TaskRecord.joinOf`): a parent run's own, or a group round's. */
export function joinIdOf(join: Pick<GroupJoinData, 'type' | 'group'>, joinOf: string): string {
  return isParentJoin(joinOf) ? parentJoinTaskId(join.type, join.group) : joinTaskId(join.type, join.group);
}

/** The task type a join task type belongs to, or `undefined` for an ordinary type. */
export function joinedType(type: string): string | undefined {
  return type.endsWith(`#${GROUP_FINISHED}`) ? type.slice(0, -GROUP_FINISHED.length - 1) : undefined;
}

/** What creating a join found: a join to write, the same join there already, or a join of something else not done yet. */
export type JoinDecision =
  | { readonly outcome: 'create'; readonly task: TaskRecord }
  | { readonly outcome: 'exists' }
  /** A join of an earlier round, group or run holds the id and has not finished (or not been counted): try later. */
  | { readonly outcome: 'blocked'; readonly by: TaskRecord };

/**
 * A group's join task, pending: its data is what the group-finished handler receives (its attempts are the
 * group-finished handler's to set). `joinOf` names what it joins (see `TaskRecord.joinOf`): a join already there for
 * the same thing is kept (creating a join twice makes one), one for something else is replaced only once it finished
 * and was counted, and waited for until then, so no round, group or parent run ever loses its join to another.
 */
export function joinTask(join: GroupJoinData, joinOf: string, parent: string | undefined, now: number, existing?: TaskRecord): JoinDecision {
  if (existing?.joinOf === joinOf) return { outcome: 'exists' };
  if (existing && (!FINISHED_STATES.has(existing.state) || existing.uncounted)) return { outcome: 'blocked', by: existing };
  return {
    outcome: 'create',
    task: {
      id: joinIdOf(join, joinOf), type: joinTaskType(join.type), name: join.group,
      ...(parent !== undefined && { parent }),
      priority: 0, data: join, state: 'pending', seq: now * 1000, submittedAt: now, notBefore: Math.max(now, existing?.heldUntil ?? now), epoch: existing?.epoch ?? 0, attempts: [], joinOf,
      ...(existing?.heldUntil !== undefined && existing.heldUntil > now && { heldUntil: existing.heldUntil }),
    },
  };
}

/** What a group's join joins: one round of one generation of the group. */
export function groupJoinOf(group: TaskGroupRecord): string {
  return `group ${group.generation ?? 0}/${group.round ?? 0}`;
}

/** What a parent's join joins: the parent's last run (its claim epoch, which grows with every run, rerun or retry). */
export function parentJoinOf(parent: TaskRecord): string {
  return `${PARENT_JOIN}${parent.epoch}`;
}

/**
 * Whether a finished parent still waits for the joins of sub-groups it submitted (its own join not submitted yet):
 * such a task is kept (not purged, and a submit of its id does not replace it), or its join would be lost.
 */
export function awaitsJoins(task: TaskRecord): boolean {
  return (task.subgroups?.submitted?.length ?? 0) > 0 && task.subgroups!.joinSubmittedAt === undefined;
}

/** What a submit asks for. */
export interface SubmitInput extends TaskIdentity {
  /** Higher is claimed first (a whole number, may be negative). Default 0. */
  readonly priority?: number;
  /** What the handler gets: JSON (stored as it is). Default `null`. */
  readonly data?: unknown;
  /** The id of the task that submitted this one (set by `context.submit`): its group's join then triggers the parent's. */
  readonly parent?: string;
  /** The run of the parent (its `seq`) that submitted this one: set by `context.submit`. */
  readonly parentRun?: number;
  /** Attempts before the task fails for good; wins over the handler's `maxAttempts`. */
  readonly maxAttempts?: number;
  /** Submit order among tasks of one priority; default: the clock in µs. */
  readonly seq?: number;
  /**
   * Whether a task of this id that already finished is run again now (`true`), or its id is remembered for the
   * retention window and the submit ignored (default). `true` makes a fixed id mean "at most once in parallel": a
   * submit while it is pending or running is still ignored. Not for grouped tasks (a group joins once).
   */
  readonly rerunFinished?: boolean;
}

/** The outcome of a submit: a new record to create, or the existing task, kept. */
export type SubmitDecision = { readonly outcome: 'created'; readonly task: TaskRecord } | { readonly outcome: 'exists'; readonly task: TaskRecord };

/**
 * Submits with an idempotent id: a task whose id exists, pending, running or finished within `retentionMs`, is
 * kept and returned; otherwise a new pending record (its epoch continues above a purged predecessor's, if known).
 */
export function decideSubmit(existing: TaskRecord | undefined, input: SubmitInput, now: number, retentionMs: number): SubmitDecision {
  const id = taskId(input);
  if (input.rerunFinished !== undefined && typeof input.rerunFinished !== 'boolean') {
    throw new InvalidDefinitionError(`<task ${id}>`, 'rerunFinished', `must be true or false, got ${JSON.stringify(input.rerunFinished)}`);
  }
  if (input.rerunFinished && input.group) throw new InvalidDefinitionError(`<task ${id}>`, 'rerunFinished', 'is not for grouped tasks (a group joins once)');
  const remembered = (existing?.finishedAt ?? now) + retentionMs > now && !input.rerunFinished;
  if (existing && (!FINISHED_STATES.has(existing.state) || remembered || existing.uncounted || awaitsJoins(existing))) return { outcome: 'exists', task: existing };
  const priority = input.priority ?? 0;
  if (!Number.isSafeInteger(priority)) throw new InvalidDefinitionError(`<task ${id}>`, 'priority', `must be a whole number, got ${JSON.stringify(priority)}`);
  const { maxAttempts } = input;
  if (maxAttempts !== undefined && (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)) {
    throw new InvalidDefinitionError(`<task ${id}>`, 'maxAttempts', `must be a whole number, 1 or more, got ${JSON.stringify(maxAttempts)}`);
  }
  const task: TaskRecord = {
    id,
    type: input.type,
    ...(input.name !== undefined && { name: input.name }),
    ...(input.group && { group: { ...input.group } }),
    ...(input.parent !== undefined && { parent: input.parent }),
    ...(input.parentRun !== undefined && { parentRun: input.parentRun }),
    priority,
    data: input.data ?? null,
    state: 'pending',
    seq: input.seq ?? now * 1000,
    submittedAt: now,
    notBefore: Math.max(now, existing?.heldUntil ?? now),
    ...(maxAttempts !== undefined && { maxAttempts }),
    epoch: existing?.epoch ?? 0,
    attempts: [],
    ...(existing?.heldUntil !== undefined && existing.heldUntil > now && { heldUntil: existing.heldUntil }),
  };
  return { outcome: 'created', task };
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
  const epoch = Math.max(task.epoch + 1, Math.floor(now + skewMs) * 1000);
  const claim: TaskClaim = { instance: actor.instance, acquirer: actor.acquirer, epoch, claimedAt: now, expiresAt: now + leaseMs };
  const attempt: TaskAttempt = { attempt: attempts.length + 1, epoch, instance: actor.instance, acquirer: actor.acquirer, startedAt: now };
  const { heldUntil: _h, ...claimable } = task;
  return { outcome: 'claimed', claim, task: { ...claimable, state: 'running', epoch, claim, attempts: [...attempts, attempt] } };
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
 * A group reopened for an operator's retry of its task `number`: the task's end is forgotten, and if the group's
 * join was submitted (`joined`: marked, or found created for this round), the group starts a new round, which gets
 * its own join once the retried task ends.
 */
export function decideReopen(group: TaskGroupRecord, number: number, joined = group.joinSubmittedAt !== undefined): TaskGroupRecord {
  const { [String(number)]: _gone, ...finished } = group.finished;
  const { joinSubmittedAt: _j, ...rest } = group;
  return joined ? { ...rest, finished, round: (group.round ?? 0) + 1 } : { ...rest, finished };
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

/** Claim order: higher priority first, then submit order, then id. */
export function compareReady(a: Pick<TaskRecord, 'priority' | 'seq' | 'id'>, b: Pick<TaskRecord, 'priority' | 'seq' | 'id'>): number {
  return b.priority - a.priority || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** What a group's record becomes when one of its tasks finished, and whether that write must submit the join. */
export interface GroupProgress {
  readonly group: TaskGroupRecord;
  /** Set once: the data of the group's join, for the write that found the group finished. */
  readonly join?: GroupJoinData;
  /** What the join joins (see `TaskRecord.joinOf`), with `join`. */
  readonly joinOf?: string;
  /** Task numbers to cancel (a failure with `failGroupFast`). */
  readonly cancel: number[];
}

/**
 * The record of `task`'s group before any task of it is counted. Its generation (the task's submit order) tells it
 * from an earlier group of the same name; the record is written before any join names it.
 */
export function newGroupRecord(task: TaskRecord): TaskGroupRecord {
  const position = task.group!;
  return {
    id: groupId(task.type, position.name), type: task.type, name: position.name, failGroupFast: position.failGroupFast === true,
    ...(task.parent !== undefined && { parent: task.parent }), ...(task.parentRun !== undefined && { parentRun: task.parentRun }),
    finished: {}, generation: task.seq,
  };
}

/**
 * Records `task`'s end in its group. The group is finished when every number up to its total has finished (the
 * total comes with whichever task carries it), or, with `failGroupFast`, at the first failure (the rest are to be
 * cancelled). The write that finds it finished marks `joinSubmittedAt`: compare-and-set makes that one write, so
 * the join is submitted exactly once (and its id is idempotent besides).
 */
export function decideGroupProgress(group: TaskGroupRecord | undefined, task: TaskRecord, now: number): GroupProgress {
  const position = task.group!;
  const base: TaskGroupRecord = group && rerunOf(group, task) ? rejoined(group, task) : (group ?? newGroupRecord(task));
  const total = base.total ?? position.total;
  const entry = groupEnd(task);
  const finished: TaskGroupRecord['finished'] = { ...base.finished, [String(position.number)]: entry };
  const next: TaskGroupRecord = { ...base, ...(total !== undefined && { total }), ...(base.parent === undefined && task.parent !== undefined && { parent: task.parent }), finished };
  if (next.joinSubmittedAt !== undefined) return { group: next, cancel: [] };
  const failed = task.state !== 'done';
  const failedFast = next.failGroupFast && failed;
  const complete = total !== undefined && Array.from({ length: total }, (_, i) => String(i + 1)).every((n) => n in finished);
  if (!complete && !failedFast) return { group: next, cancel: [] };
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const [n, f] of Object.entries(finished)) {
    if (f.state === 'done') results[n] = f.result;
    else errors[n] = f.error ?? f.state;
  }
  const cancel = failedFast && total !== undefined ? Array.from({ length: total }, (_, i) => i + 1).filter((n) => !(String(n) in finished)) : [];
  return {
    group: { ...next, joinSubmittedAt: now },
    joinOf: groupJoinOf(next),
    join: { group: next.name, type: next.type, total: total ?? Object.keys(finished).length, results, errors, failedFast, ...(next.round && { round: next.round }) },
    cancel,
  };
}

/** Whether `task` comes from a later run of the parent than the one whose sub-group `group` joined already. */
function rerunOf(group: TaskGroupRecord, task: TaskRecord): boolean {
  return group.joinSubmittedAt !== undefined && task.parentRun !== undefined && group.parentRun !== undefined && task.parentRun !== group.parentRun;
}

/**
 * A joined sub-group that a new run of its parent added tasks to (its other tasks remembered from the earlier run):
 * a new round, so the new run's parent hears of it, with the ends of both runs' tasks.
 */
function rejoined(group: TaskGroupRecord, task: TaskRecord): TaskGroupRecord {
  const { joinSubmittedAt: _j, ...rest } = group;
  return { ...rest, round: (group.round ?? 0) + 1, parentRun: task.parentRun };
}

/**
 * Whether a `failGroupFast` group stopped at a failure: its join is submitted, and not because every task ended.
 * Tasks of it that are still waiting, or submitted later, are cancelled instead of run.
 */
export function groupStoppedFast(group: TaskGroupRecord | undefined): boolean {
  if (!group?.failGroupFast || group.joinSubmittedAt === undefined) return false;
  return Object.values(group.finished).some((f) => f.state !== 'done');
}

/** The end of a task as its group or parent hears of it. */
export function groupEnd(task: TaskRecord): GroupEnd {
  return task.state === 'done' ? { state: task.state, result: task.result } : { state: task.state, error: task.attempts.at(-1)?.error ?? task.state };
}

/** What a parent task becomes when the join of one of its sub-groups (`groupId`) ended as `end`. */
export function recordSubgroupJoin(parent: TaskRecord, groupId: string, end: GroupEnd): TaskRecord {
  return { ...parent, subgroups: { ...parent.subgroups, joined: { ...parent.subgroups?.joined, [groupId]: end } } };
}

/**
 * The parent's own join, once it is due: the parent finished and the joins of every sub-group it submitted ended.
 * Returns the parent marked (`joinSubmittedAt`) and the join's data: the sub-groups' join results and errors by
 * group id. Nothing for a task with no sub-groups, one not finished, or one whose join was submitted already.
 */
export function decideParentJoin(parent: TaskRecord, now: number): { readonly parent: TaskRecord; readonly join: GroupJoinData; readonly joinOf: string } | undefined {
  const progress = parent.subgroups;
  if (!progress?.submitted?.length || progress.joinSubmittedAt !== undefined || !FINISHED_STATES.has(parent.state)) return undefined;
  if (!progress.submitted.every((g) => g in progress.joined)) return undefined;
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const g of progress.submitted) {
    const end = progress.joined[g];
    if (end.state === 'done') results[g] = end.result;
    else errors[g] = end.error ?? end.state;
  }
  return {
    parent: { ...parent, subgroups: { ...progress, joinSubmittedAt: now } },
    joinOf: parentJoinOf(parent),
    join: { group: parent.id.slice(parent.type.length + 1), type: parent.type, total: progress.submitted.length, results, errors, failedFast: false },
  };
}

/**
 * A finished task whose end others must hear of is marked until they did: a grouped task until its group counted
 * it, a join of sub-tasks until its parent recorded it, a parent whose sub-groups all joined until its own join
 * was submitted.
 */
function withCounting(task: TaskRecord): TaskRecord {
  const mark = task.group || (task.parent !== undefined && task.type.endsWith(`#${GROUP_FINISHED}`)) || decideParentJoin(task, 0) !== undefined;
  return mark ? { ...task, uncounted: true } : task;
}

/** The task once its group record counted it. */
export function counted(task: TaskRecord): TaskRecord {
  const { uncounted: _u, ...rest } = task;
  return rest;
}

function fence(task: TaskRecord, actor: TaskActor, epoch: number): FencedDecision | undefined {
  if (task.state !== 'running' || !task.claim || task.claim.epoch !== epoch || task.claim.instance !== actor.instance) {
    const now = task.claim ? `claimed by ${task.claim.acquirer} with epoch ${task.claim.epoch}` : task.state;
    return { outcome: 'lease-lost', message: `task ${task.id} is no longer held under epoch ${epoch} (now ${now})` };
  }
  return undefined;
}

function endAttempt(attempts: readonly TaskAttempt[], epoch: number | undefined, now: number, outcome: TaskAttempt['outcome'], error?: string): TaskAttempt[] {
  return attempts.map((a) => (a.epoch === epoch && a.endedAt === undefined ? { ...a, endedAt: now, outcome, ...(error !== undefined && { error }) } : a));
}
