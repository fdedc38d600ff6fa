import { ShuttingDownError } from '../errors/shutting-down.error';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import type { TaskEvent } from '../../tasks/task-events';
import type { TaskRecord } from '../../store/tasks/task';
import { TaskAdmin } from '../../tasks/task-admin';
import type { TaskStore } from '../../store/tasks/task-store';
import type { TaskContext } from '../../tasks/task-handler';
import { TaskWorker } from '../../tasks/task-worker';
import { TaskConnection } from '../../tasks/task-connection';
import type { SubmitInput } from '../../tasks/task-submit.rules';
import type { SqlTransaction } from '../../store/tasks/task-store';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import { OutageNotice } from '../signals/outage-notice';
import { GATEKEEPER_BACKENDS, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_TASK_STORE, TASK_HANDLER_METADATA } from '../gatekeeper.constants';
import type { ModuleBackends } from '../gatekeeper-stores.factory';
import { TaskMoveHold } from '../../tasks/task-move-hold';
import type { CapabilityRuntime } from '../capability.runtime';
import { GatekeeperExplorer, type DecoratedMethod } from '../gatekeeper.explorer';
import type { TaskHandlerRegistration } from './task-handler.decorator';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { GatekeeperEvents, isObserved } from '../signals/gatekeeper-events';
import { GatekeeperTracing } from '../signals/gatekeeper-tracing';
import { joinedType } from '../../tasks/task-id.rules';
import { invalidDecorator } from '../errors/decorator.errors';

/**
 * This node's part in leased distributed tasks: the {@link TaskWorker} with every `@TaskHandler`,
 * `@GroupFinishedHandler` and `@OncePerTrigger` method found at start-up, the store connected on first use, the
 * operators' {@link TaskAdmin}, and the graceful stop (claim no more, let running handlers finish within the
 * shutdown timeout, hand the rest back). `TaskService` serves it to applications. Used inside the module.
 */
@Injectable()
export class TasksRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly outage = new OutageNotice(this.logger, 'Tasks', 'no task is claimed here, and running ones finish or hand back as their leases allow');
  private readonly triggers = new Map<object, CronTrigger>();
  private readonly connection: TaskConnection;
  private onInvalid?: (task: TaskRecord, error: string) => unknown;
  private phase: 'idle' | 'started' | 'stopped' = 'idle';
  /** Claims wait while tasks move onto this store (see TaskMoveHold). */
  private hold?: TaskMoveHold;
  private readonly admin: TaskAdmin;
  private readonly events$ = new Subject<TaskEvent>();

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_TASK_STORE) private readonly store: TaskStore,
    private readonly explorer: GatekeeperExplorer,
    private readonly lifecycleEvents: GatekeeperEvents,
    private readonly tracing: GatekeeperTracing,
    @Inject(GATEKEEPER_BACKENDS) private readonly backends: ModuleBackends,
  ) {
    this.admin = new TaskAdmin(store, options.taskClock, { retentionMs: options.tasks.retentionMs, clockSkewMs: options.clockSkewMs });
    this.connection = new TaskConnection(store, {
      clock: options.taskClock,
      worker: () => this.newWorker(),
      onCorrupt: (key, reason) => this.logger.error(`Tasks: skipped unreadable task ${key}: ${reason}`),
      onCloseFailed: (error) => this.logger.warn(`Tasks: closing the store failed: ${(error as Error).message}`),
    });
  }

  /**
   * Checks every task decorator (one handler per type, a `@Cron` under each `@OncePerTrigger`) and, when this
   * node has handlers, connects and starts claiming. Called by the module once it is ready.
   */
  async start(): Promise<void> {
    if (this.phase !== 'idle') return;
    const methods = this.explorer.discover<TaskHandlerRegistration>(TASK_HANDLER_METADATA);
    const worker = this.check(methods) && (await this.connection.connected());
    if (this.phase !== 'idle') return; // stopped while connecting: nothing is started
    this.phase = 'started';
    if (!worker) return;
    for (const method of methods) this.register(worker, method);
    const types = methods.flatMap(({ metadata: r }) => (r.kind === 'invalid' ? [] : [`${r.type}${r.kind === 'group-finished' ? ' (joins)' : ''}`]));
    // Claiming waits while tasks are moving onto this store (`store move`): the old store's nodes still run theirs.
    this.hold = new TaskMoveHold(this.backends.of.tasks, this.options.tasks.scanMs, {
      held: (mark) => this.logger.warn(`Tasks: held, claiming nothing: tasks are moving onto this store from the ${mark.other} store (store move, since ${new Date(mark.at).toISOString()}); claiming starts once \`store move --finish\` ran`),
      failed: (error) => this.logger.warn(`Tasks: held, claiming nothing: could not read whether tasks are moving onto this store (${(error as Error).message}); reading again`),
    });
    this.hold.whenReleased(() => {
      if (this.phase !== 'started') return;
      worker.start();
      this.logger.log(`Tasks: running ${types.join(', ')} (concurrency ${this.options.tasks.concurrency}, scan every ${this.options.tasks.scanMs} ms)`);
    });
  }

  /** Drains with the module's `shutdownTimeout` (when no drain came first); idempotent. */
  stop(): Promise<void> {
    return this.drain(this.options.shutdownTimeoutMs);
  }

  /** Stops claiming, lets running handlers finish for up to `drainMs`, hands the rest back; then disconnects. */
  async drain(drainMs: number): Promise<void> {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.hold?.stop();
    const running = await this.connection.stop(drainMs);
    if (running.length > 0) this.logger.log(`Tasks: stopped; ${running.length} running at shutdown (finished or handed back): ${running.slice(0, 5).join(', ')}`);
  }

  /** Submits a task (idempotent by id), in the application's transaction when given one; connects on first use. */
  async submit(input: SubmitInput, transaction?: SqlTransaction): Promise<TaskRecord> {
    if (this.phase === 'stopped') throw new ShuttingDownError(`Task ${input.type}`);
    return (await this.connection.connected()).submit(input, transaction);
  }

  /** Submits tasks in bulk (see `TaskWorker.submitMany`), in the application's transaction when given one. */
  async submitMany(inputs: readonly SubmitInput[], transaction?: SqlTransaction): Promise<TaskRecord[]> {
    if (this.phase === 'stopped') throw new ShuttingDownError('Tasks');
    return (await this.connection.connected()).submitMany(inputs, transaction);
  }

  /**
   * The submit of a `@OncePerTrigger` tick: the task named by the scheduled instant the tick is for (the latest at
   * now); nothing for a tick the cron package fired at an instant that is not a fire instant (a daylight-saving shift).
   */
  async submitTrigger(type: string, method: object, where: string): Promise<TaskRecord | undefined> {
    const instant = this.trigger(method, where).instantFor(this.options.clock.now());
    if (instant === undefined) {
      this.logger.debug(`${where}: a tick of the cron package at an instant that is not a fire instant (a daylight-saving shift); nothing submitted`);
      return undefined;
    }
    return this.submit({ type, name: new Date(instant).toISOString() });
  }

  /** Operators' tools over the tasks (counts, listings, retry, cancel, purge, group progress), once connected. */
  async tools(): Promise<TaskAdmin> {
    await this.connection.connected();
    return this.admin;
  }

  /** Every claim and run outcome on this node, as it happens. */
  get events(): Observable<TaskEvent> {
    return this.events$.asObservable();
  }

  /** Task counts by type and state, only when this node already connected its task store (else `undefined`). */
  async countsIfConnected(): Promise<Record<string, Record<string, number>> | undefined> {
    if (!this.connection.worker || this.phase === 'stopped') return undefined;
    return this.admin.counts();
  }

  /** The tasks this node runs now. */
  runningTasks(): string[] {
    return this.connection.worker?.runningTasks() ?? [];
  }

  /** This node's worker, on the connected store, its reports going to the log, the events and the streams. */
  private newWorker(): TaskWorker {
    const { holder, taskClock, clockSkewMs, tasks } = this.options;
    return new TaskWorker(this.store, { instance: holder.instance, acquirer: holder.acquirer }, {
      clock: taskClock,
      clockSkewMs,
      retentionMs: tasks.retentionMs,
      concurrency: tasks.concurrency,
      scanMs: tasks.scanMs,
      purgeMs: tasks.purgeMs,
      onInvalid: (task, error) => this.invalid(task, error),
      onError: (error, what) => {
        if (OutageNotice.isOutage(error)) this.outage.failed(`${what} failed: ${(error as Error).message}`);
        else this.logger.warn(`Tasks: ${what} failed: ${(error as Error).message}`);
      },
      onHealthy: () => this.outage.succeeded(),
      onEvent: (event) => {
        if (event.kind === 'failed') this.logger.warn(`Tasks: ${event.task.id} failed for good after ${event.task.attempts.length} attempt(s): ${event.error}`);
        // Two events per task on a busy node: nothing is built for streams and emitters nobody listens to.
        if (isObserved(this.events$)) this.events$.next(event);
        if (this.lifecycleEvents.heard()) this.publish(event);
      },
    });
  }

  /** Whether there is anything to run; throws naming the method when a decorator is misused. */
  private check(methods: ReadonlyArray<DecoratedMethod<TaskHandlerRegistration>>): boolean {
    const types = new Map<string, string>();
    let invalid: string | undefined;
    for (const { where, metadata: registration, method } of methods) {
      if (registration.kind === 'invalid') {
        if (invalid) throw invalidDecorator(`@InvalidTaskHandler on ${where}`, `there is one already, on ${invalid} (one per app)`);
        invalid = where;
        continue;
      }
      const key = registration.kind === 'group-finished' ? `joins of ${registration.type}` : `tasks of ${registration.type}`;
      const other = types.get(key);
      if (other) throw invalidDecorator(where, `${key} are handled already, by ${other} (one handler per type per node)`);
      types.set(key, where);
      if (registration.kind === 'trigger') this.trigger(method, where);
    }
    return types.size > 0;
  }

  private register(worker: TaskWorker, { metadata: registration, instance, method }: DecoratedMethod<TaskHandlerRegistration>): void {
    const plain = (fn: (...args: unknown[]) => unknown, ...args: unknown[]) => fn.apply(instance, args);
    // A task run in a span: the task, its type, the claim's epoch and attempt; an error marks it failed.
    const call = (fn: (...args: unknown[]) => unknown, data: unknown, context: TaskContext) => this.tracing.span('gatekeeper.task', {
      'gatekeeper.task': context.task.id, 'gatekeeper.task_type': context.task.type, 'gatekeeper.token': context.epoch, 'gatekeeper.attempt': context.attempt,
    }, async () => fn.apply(instance, [data, context]));
    switch (registration.kind) {
      case 'task':
        worker.handle(registration.type, (data, context) => call(method as (...args: unknown[]) => unknown, data, context), registration.options);
        break;
      case 'group-finished':
        worker.onGroupFinished(registration.type, (join, context) => call(method as (...args: unknown[]) => unknown, join, context), registration.options);
        break;
      case 'trigger':
        worker.handle(registration.type, (_data, context: TaskContext) => call((_d, c) => plain(registration.body, c), undefined, context), registration.options);
        break;
      case 'invalid':
        this.onInvalid = (task, error) => plain(method as (...args: unknown[]) => unknown, task, error);
    }
  }

  /** A task's claim and outcomes as lifecycle events (`gatekeeper.task.*`). */
  private publish(event: TaskEvent): void {
    if (!('task' in event)) return;
    const base = { task: event.task.id, type: event.task.type, epoch: event.epoch };
    if (event.kind === 'claimed') this.lifecycleEvents.emit({ name: 'gatekeeper.task.claimed', ...base });
    else if (event.kind === 'completed') {
      this.lifecycleEvents.emit({ name: 'gatekeeper.task.completed', ...base });
      const joined = joinedType(event.task.type);
      if (joined !== undefined) this.lifecycleEvents.emit({ name: 'gatekeeper.task.group-finished', ...base, type: joined, group: event.task.name ?? '' });
    } else if (event.kind === 'failed' || event.kind === 'invalid') this.lifecycleEvents.emit({ name: `gatekeeper.task.${event.kind}`, ...base, error: event.error });
  }

  private invalid(task: TaskRecord, error: string): void {
    if (!this.onInvalid) {
      this.logger.warn(`Tasks: ${task.id} is invalid and will not be retried: ${error}`);
      return;
    }
    void Promise.resolve()
      .then(() => this.onInvalid!(task, error))
      .catch((failure: unknown) => this.logger.error(`Tasks: the invalid-task handler failed on ${task.id}: ${(failure as Error).message}`));
  }

  private trigger(method: object, where: string): CronTrigger {
    let trigger = this.triggers.get(method);
    if (!trigger) {
      const found = CronTrigger.of(method);
      if (typeof found === 'string') throw invalidDecorator(where, `cannot name its triggers: ${found}`);
      this.triggers.set(method, (trigger = found));
    }
    return trigger;
  }
}
