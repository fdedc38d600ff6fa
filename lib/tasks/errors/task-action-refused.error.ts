import { GatekeeperError } from '../../core/errors/gatekeeper.error';

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
