import { GatekeeperError } from '../core/errors/gatekeeper.error';

/** Thrown by `renewLease()` (and any fenced write) once this node no longer holds the task: stop at once. */
export class LeaseExpiredError extends GatekeeperError {
  constructor(
    /** The task. */
    readonly taskId: string,
    /** The epoch of the claim that was lost. */
    readonly epoch: number,
    /** Why. */
    readonly reason: string,
  ) {
    super(`Lease of task ${taskId} (epoch ${epoch}) is lost: ${reason}`);
  }
}

/** Thrown by a handler: try again later (after `delayMs`, or the backoff), using up one attempt. */
export class RetryLaterError extends GatekeeperError {
  constructor(
    message: string,
    /** How long to wait before the next attempt; the backoff when absent. */
    readonly delayMs?: number,
  ) {
    super(message);
  }
}

/** Thrown by a handler: the task itself is wrong; it is not retried but goes to the invalid-task handler. */
export class InvalidTaskError extends GatekeeperError {}

/** An operator's action on a task (retry, cancel) that cannot be done: names the task, the action and why. */
export class TaskActionRefusedError extends GatekeeperError {
  constructor(
    /** The task. */
    readonly taskId: string,
    /** `retry` or `cancel`. */
    readonly action: string,
    /** Why not. */
    readonly reason: string,
  ) {
    super(`Cannot ${action} task ${taskId}: ${reason}`);
  }
}

/** There is no task of this id (never submitted, or purged). */
export class UnknownTaskError extends GatekeeperError {
  constructor(
    /** The id asked for. */
    readonly taskId: string,
  ) {
    super(`No task ${taskId} (never submitted, or purged after its retention window)`);
  }
}

/** An operator's filter or option on tasks is invalid: `field` names it (`state`, `limit`, `olderThan`). */
export class InvalidTaskQueryError extends GatekeeperError {
  constructor(
    /** The field that is wrong. */
    readonly field: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`Task query: invalid ${field}: ${reason}`);
  }
}
