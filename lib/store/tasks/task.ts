/*
 * Leased distributed tasks (seed 004), the data model.
 *
 * A task lives in one record written only by compare-and-set. Claiming it leases it to one instance with an
 * **epoch** (the fencing token of that claim, growing with every claim of the task), and every later write of the
 * claim (renew, complete, fail, invalid) is checked against that epoch, so a handler that lost its lease can never
 * complete or overwrite a task another node claimed since. A group keeps one record of its own, which counts the
 * finished tasks and submits the group-finished ("join") task exactly once.
 */

/** Where a task sits in a group (seed 004's GroupedTaskId). */
export interface TaskGroupPosition {
  /** The group's name, in the context of the task type (`recon-system-x`). */
  readonly name: string;
  /** This task's number in the group, from 1. */
  readonly number: number;
  /**
   * How many tasks the group has. May be known only on the last task (then its number equals the total); the group
   * is finished once every number up to the total finished.
   */
  readonly total?: number;
  /**
   * One failure stops the rest of the group and triggers its join at once: tasks not started are cancelled (where they
   * wait, or by the worker about to claim one), and tasks submitted later are cancelled on arrival.
   */
  readonly failGroupFast?: boolean;
}

/** What a submit names: a type and either a name (a single task) or a place in a group. */
export interface TaskIdentity {
  /** The task type: which handler runs it (`recon-record-set`). */
  readonly type: string;
  /** A single task's name (`recon-system-x`); its id is `<type>:<name>`. */
  readonly name?: string;
  /** A grouped task's place; its id is `<type>:<group>:<number>` (the total is not part of it). */
  readonly group?: TaskGroupPosition;
}

/** A task's state. */
export type TaskState = 'pending' | 'running' | 'done' | 'failed' | 'invalid' | 'cancelled';

/** The states a task does not leave (until it is purged after the retention window). */
export const FINISHED_STATES: ReadonlySet<TaskState> = new Set<TaskState>(['done', 'failed', 'invalid', 'cancelled']);

/** The lease of a running task. */
export interface TaskClaim {
  /** The claiming instance (ownership is per process). */
  readonly instance: string;
  /** Its acquirer name (for people). */
  readonly acquirer: string;
  /** The claim's fencing token: grows with every claim of this task. */
  readonly epoch: number;
  /** When it was claimed (epoch ms, the claimer's clock). */
  readonly claimedAt: number;
  /** When the lease lapses unless renewed (epoch ms, the claimer's clock). */
  readonly expiresAt: number;
}

/** How one attempt ended. */
export type AttemptOutcome = 'done' | 'retry' | 'failed' | 'invalid' | 'lapsed' | 'cancelled';

/** One attempt at a task: who ran it under which epoch, and how it ended. */
export interface TaskAttempt {
  /** The attempt's number, from 1. */
  readonly attempt: number;
  /** The claim's epoch (fencing token) this attempt ran under. */
  readonly epoch: number;
  /** The instance that ran it. */
  readonly instance: string;
  /** That instance's acquirer name (for people). */
  readonly acquirer: string;
  /** When it started (epoch ms, the claimer's clock). */
  readonly startedAt: number;
  /** When it ended (epoch ms), once it did. */
  readonly endedAt?: number;
  /** How it ended, once it did. */
  readonly outcome?: AttemptOutcome;
  /** The error message, for an attempt that failed. */
  readonly error?: string;
}

/** A task as stored. */
export interface TaskRecord {
  /** `<type>:<name>` or `<type>:<group>:<number>`. */
  readonly id: string;
  /** The task type: which handler runs it. */
  readonly type: string;
  /** A single task's name (none for a grouped task). */
  readonly name?: string;
  /** A grouped task's place in its group. */
  readonly group?: TaskGroupPosition;
  /** The task whose handler submitted this one (sub-tasks): its group's join goes to that task's type. */
  readonly parent?: string;
  /** Which run of the parent (its `seq`: a retry keeps it, a rerun has a new one) submitted this one. */
  readonly parentRun?: number;
  /** Higher runs first. */
  readonly priority: number;
  /** JSON data. */
  readonly data: unknown;
  /** Where it is in its life. */
  readonly state: TaskState;
  /** Submit order among tasks of one priority (the submitter's clock in µs, made unique by the id). */
  readonly seq: number;
  /** When it was submitted (epoch ms, the submitter's clock). */
  readonly submittedAt: number;
  /** Not claimed before this (retry backoff). */
  readonly notBefore: number;
  /**
   * How many attempts (failed, retried or lapsed) the task may use up before it fails for good, when its submit said
   * so; otherwise the claiming node's handler option decides.
   */
  readonly maxAttempts?: number;
  /** The epoch of the last claim (0 before the first): the next claim's is above it. */
  readonly epoch: number;
  /** The lease of the claim running it, while one does. */
  readonly claim?: TaskClaim;
  /** Every attempt so far, oldest first. */
  readonly attempts: readonly TaskAttempt[];
  /** The handler's return value, once done. */
  readonly result?: unknown;
  /** When it finished (epoch ms), once it did. */
  readonly finishedAt?: number;
  /** Sub-groups this task submitted from its handler, and how their joins ended: this task's own join waits for them. */
  readonly subgroups?: SubgroupProgress;
  /**
   * Set when a task finishes whose end others must hear of: a grouped task until its group record counted it, a join
   * of sub-tasks until its parent's join was submitted. Whoever finds it set (the finishing node, or any node's scan
   * if that one died in between) does it, so no group or parent waits for ever for its join.
   */
  readonly uncounted?: true;
  /**
   * Set on a join (group-finished) task: what it joins, a round of one generation of a group or one run of a parent
   * task. A join of something else (a later round, a group of the same name submitted again, a parent run again)
   * replaces it only once it finished and was counted; until then that join waits.
   */
  readonly joinOf?: string;
  /**
   * Set when a cancel ended a running claim: its handler learns of the cancel only at its next renewal, so it may
   * run on until its lease ends, at this instant. The task is not claimed again (retried, submitted again) before
   * this plus the skew bound: never two runs at once that each believe in their lease.
   */
  readonly heldUntil?: number;
}

/**
 * A parent task's sub-groups: the ids (`<type>:<group>`) of the groups its handler submitted tasks in (known once it
 * finished), and each one's join outcome as it arrives. The parent's join is submitted once it finished and every
 * sub-group's join did.
 */
export interface SubgroupProgress {
  /** Set when the parent finished: the sub-groups its run submitted (the union over its attempts). */
  readonly submitted?: readonly string[];
  /** Sub-group joins that ended, by group id: the join's result, or its error. */
  readonly joined: Readonly<Record<string, GroupEnd>>;
  /** Set by the write that submitted the parent's join, once. */
  readonly joinSubmittedAt?: number;
}

/** How a task, or a group's join, ended: its state and result or error. */
export interface GroupEnd {
  /** The state it finished in. */
  readonly state: TaskState;
  /** The handler's return value, when it succeeded. */
  readonly result?: unknown;
  /** The error message, when it did not. */
  readonly error?: string;
}

/** The record a group keeps: which of its tasks finished and how, and whether its join was submitted. */
export interface TaskGroupRecord {
  /** `<type>:<group>`. */
  readonly id: string;
  /** The task type of the group's tasks. */
  readonly type: string;
  /** The group's name. */
  readonly name: string;
  /** Known once a task carried it. */
  readonly total?: number;
  /** Whether one failure stops the rest of the group (see {@link TaskGroupPosition.failGroupFast}). */
  readonly failGroupFast: boolean;
  /** The parent task, when the group's tasks were submitted by a handler. */
  readonly parent?: string;
  /** The run of the parent whose tasks the group's current round counts (a later run's tasks start a new round). */
  readonly parentRun?: number;
  /** Finished tasks by number: their outcome and result or error. */
  readonly finished: Readonly<Record<string, GroupEnd>>;
  /** Set by the write that found the group finished; that write's caller submits the join, once. */
  readonly joinSubmittedAt?: number;
  /** How often an operator reopened the group after its join (a retried task): each round gets one join. */
  readonly round?: number;
  /**
   * Tells this group from an earlier one of the same name whose records were purged (the submit order of the task
   * that created the record), so each gets a join of its own.
   */
  readonly generation?: number;
}

/** What a group's join (its group-finished task) is handed. */
export interface GroupJoinData {
  /** The group's name. */
  readonly group: string;
  /** The task type of the group's tasks. */
  readonly type: string;
  /** How many tasks the group had. */
  readonly total: number;
  /** Results by task number, of the tasks that succeeded. */
  readonly results: Readonly<Record<string, unknown>>;
  /** Errors by task number, of the tasks that failed, were invalid or were cancelled. */
  readonly errors: Readonly<Record<string, string>>;
  /** Whether the group stopped early because a task failed (`failGroupFast`). */
  readonly failedFast: boolean;
  /** The group's round: 0, or how often an operator reopened it by retrying one of its tasks after its join. */
  readonly round?: number;
}

/** Retry backoff: `base × factor^(attempt − 1)`, at most `max`. */
export interface BackoffPolicy {
  /** The wait before the second attempt, in milliseconds. */
  readonly baseMs: number;
  /** What each further wait is multiplied by. */
  readonly factor: number;
  /** The longest wait, in milliseconds. */
  readonly maxMs: number;

}

/** The suffix of a group's join task id. */
export const GROUP_FINISHED = 'group-finished';
