import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { TaskEvent } from '../../tasks/task-events';
import type { TaskRecord } from '../../store/tasks/task';
import type { TaskGroupStatus, TaskStateCounts } from '../../tasks/task-admin';
import type { TaskPurgeOptions } from '../../tasks/task-admin.input';
import type { TaskQuery } from '../../store/tasks/task-store';
import type { FenceExecutor } from '../../fencing/fence-executor';
import type { SubmitInput } from '../../tasks/task-submit.rules';
import { TasksRuntime } from './tasks.runtime';
import { invalidDefinition } from '../../core/errors/input.errors';

/**
 * Leased distributed tasks (seed 004): submit work with an idempotent id, and any node with a `@TaskHandler` for
 * its type runs it under a renewable, fenced lease, at least once, retrying with backoff; groups of tasks join
 * once. Also the operators' tools: counts, listings, one task with its attempts, retry, cancel, purge, and group
 * progress.
 *
 * @example
 * ```ts
 * await this.tasks.submit({ type: 'recon-parent', name: 'recon-system-x', priority: 5, data: { system: 'x' } });
 * ```
 */
@Injectable()
export class TaskService {
  /** @internal Nest injects the service; applications never construct it. */
  constructor(private readonly tasks: TasksRuntime) {}

  /**
   * Submits a task and returns it. Its id is `<type>:<name>`, or `<type>:<group>:<number>` for a grouped task; a
   * task whose id exists (pending, running, or finished within the retention window) is returned as it is and
   * nothing is submitted, so three nodes submitting one id make one task. `data` must be JSON. Higher `priority`
   * is claimed first, then submit order. Bad input throws naming the field, before anything is written.
   *
   * With `options.transaction` (PostgreSQL backend), the task is written inside your own database transaction, through
   * an executor of `nestjs-gatekeeper/fencing` on the database the backend uses: it exists if and only if your
   * transaction commits, with your rows (an outbox without the outbox). Workers hear of it once it commits.
   *
   * @example
   * ```ts
   * await dataSource.transaction(async (manager) => {
   *   await manager.insert(Order, order);
   *   await this.tasks.submit({ type: 'ship', name: order.id, data: { order: order.id } }, { transaction: typeormExecutor(manager) });
   * });
   * ```
   */
  submit(input: SubmitInput, options: { readonly transaction?: FenceExecutor } = {}): Promise<TaskRecord> {
    return this.tasks.submit(input, options.transaction);
  }

  /**
   * Submits many tasks at once and returns them in the order given, each as {@link TaskService.submit} would (an id
   * that exists is returned as it is). Every input is checked first: a bad one throws `InvalidInputError` naming its
   * place and the field (`inputs[3].priority`), and nothing is submitted. The submits go out together (on Redis, up
   * to 256 in one script call), or one after another inside `options.transaction`. A store that fails partway leaves
   * the earlier tasks submitted: their ids make a retry of the whole list safe.
   *
   * @example
   * ```ts
   * await this.tasks.submitMany(invoices.map((invoice) => ({ type: 'send-invoice', name: invoice.id, data: { invoice: invoice.id } })));
   * ```
   */
  submitMany(inputs: readonly SubmitInput[], options: { readonly transaction?: FenceExecutor } = {}): Promise<TaskRecord[]> {
    return this.tasks.submitMany(inputs, options.transaction);
  }

  /**
   * Submits the task of one trigger of a schedule: its name is the trigger's instant (`2026-11-23T01:00:00.000Z`),
   * so every node that fires the trigger names the same task, and one of them runs it. Pass the scheduled instant,
   * not the moment the tick ran (`@OncePerTrigger` works it out from the `@Cron` expression for you).
   */
  submitForTrigger(input: Omit<SubmitInput, 'name' | 'group'>, trigger: Date): Promise<TaskRecord> {
    if (!(trigger instanceof Date) || Number.isNaN(trigger.getTime())) throw invalidDefinition(undefined, 'trigger', `must be a valid Date, got ${String(trigger)}`, `task ${input.type}`);
    return this.tasks.submit({ ...input, name: trigger.toISOString() });
  }

  /**
   * One task with its attempts (who ran it, under which epoch, how it ended, the error), or `undefined`. An id no task
   * can have (a control character, a lone surrogate, more than 500 characters) throws `InvalidInputError` on `id`
   * before any store call, as `retry`, `cancel`, `group`, `list` and `purge` do for their names.
   */
  async get(id: string): Promise<TaskRecord | undefined> {
    return (await this.tasks.tools()).get(id);
  }

  /** Tasks matching `query` (types, states, group name), in claim order, at most `limit` (default 100). */
  async list(query: TaskQuery = {}, limit = 100): Promise<TaskRecord[]> {
    return (await this.tasks.tools()).list(query, limit);
  }

  /** Tasks by type and state. Lists every task: an operator's call, not one for a hot path. */
  async counts(): Promise<Record<string, TaskStateCounts>> {
    return (await this.tasks.tools()).counts();
  }

  /** Runs a failed, invalid or cancelled task again (attempts start over; its group waits for it again). */
  async retry(id: string): Promise<TaskRecord> {
    return (await this.tasks.tools()).retry(id);
  }

  /** Cancels a pending or running task: a running handler's signal fires at its next renewal and its result is refused. */
  async cancel(id: string): Promise<TaskRecord> {
    return (await this.tasks.tools()).cancel(id);
  }

  /** Removes finished tasks now (by type, state and age), so their ids can be submitted again. Returns how many. */
  async purge(options: TaskPurgeOptions = {}): Promise<number> {
    return (await this.tasks.tools()).purge(options);
  }

  /** A group's progress (tasks by state, finished, failed, its join), or `undefined` if there is no such group. */
  async group(type: string, name: string): Promise<TaskGroupStatus | undefined> {
    return (await this.tasks.tools()).group(type, name);
  }

  /**
   * What happens to tasks on this node, as it happens: claims, and each run's end (`completed`, `retrying`,
   * `failed`, `invalid` once the store accepted it; `rejected` when its lease was lost and its outcome not written).
   */
  get events(): Observable<TaskEvent> {
    return this.tasks.events;
  }

  /** The ids of the tasks this node runs now. */
  running(): string[] {
    return this.tasks.runningTasks();
  }
}
