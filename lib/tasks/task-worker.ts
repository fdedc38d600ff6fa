import type { GroupJoinData, TaskRecord } from '../store/tasks/task';
import type { TaskActor } from './task-claim.rules';
import { TaskClaims } from './task-claims';
import { reserves, TaskPulls } from './task-pulls';
import { TaskFencing } from './task-fencing';
import { TaskGroups } from './task-groups';
import { registration, type GroupFinishedHandler, type Registration, type TaskContext, type TaskHandler, type TaskHandlerOptions } from './task-handler';
import { joinTaskType } from './task-id.rules';
import { TaskOutcomes } from './task-outcomes';
import { purgeExpired } from './task-purge';
import { TaskRuns } from './task-runs';
import type { TaskStore } from '../store/tasks/task-store';
import { checkInputs, type SubmitInput } from './task-submit.rules';
import type { SqlTransaction } from '../store/tasks/task-store';
import { TaskSubmits } from './task-submits';
import { retentionOf, type TaskWorkerOptions } from './task-worker.options';

/** Submits of one `submitMany` in flight at once, at most. */
const SUBMITS_AT_ONCE = 1_000;

/**
 * One node's part in leased distributed tasks (seed 004): submits with idempotent ids, claims the types it has
 * handlers for (highest priority first, then submit order) when told of new work and on a slow scan that also
 * finds tasks whose lease lapsed, runs each under a lease it renews, and records the outcome with a write fenced by
 * the claim's epoch. Grouped tasks count into their group's record, whose finishing write submits the join once;
 * a join of sub-tasks then triggers their parent's join.
 *
 * This class keeps the handlers and the node's lifecycle; each role is a collaborator of its own: the claim loop
 * ({@link TaskPulls} on a store that reserves work for one worker at a time, else {@link TaskClaims}), the runs ({@link TaskRuns}), their outcomes ({@link TaskOutcomes}), groups and joins
 * ({@link TaskGroups}), submits ({@link TaskSubmits}) and the fenced writes they share ({@link TaskFencing}).
 */
export class TaskWorker {
  private readonly handlers = new Map<string, Registration>();
  private readonly submits: TaskSubmits;
  private readonly groups: TaskGroups;
  private readonly runs: TaskRuns;
  private readonly claims: TaskClaims | TaskPulls;
  private unwatch?: () => void;
  private timer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  private started = false;
  private stopping = false;

  constructor(
    private readonly store: TaskStore,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
  ) {
    const fencing = new TaskFencing(store, actor, options.clock);
    this.submits = new TaskSubmits(store, options);
    this.groups = new TaskGroups(store, options);
    const outcomes = new TaskOutcomes(fencing, this.groups, actor, options);
    // A run that frees its slot wakes the claim loop (built just below: the runs only call it later).
    this.runs = new TaskRuns(fencing, outcomes, this.submits, actor, options, () => this.claims.kick());
    // A store that hands work out one worker at a time is pulled from; any other is watched and raced for.
    this.claims = reserves(store)
      ? new TaskPulls(store, actor, options, this.handlers, this.runs, outcomes, this.groups, fencing)
      : new TaskClaims(store, actor, options, this.handlers, this.runs, outcomes, this.groups, fencing);
  }

  /** Runs tasks of `type` with `handler` (one handler per type; a node without one never claims the type). */
  handle(type: string, handler: TaskHandler, options: TaskHandlerOptions = {}): void {
    this.register(type, handler, options);
  }

  /** Runs the joins of groups of `type` with `handler`. */
  onGroupFinished(type: string, handler: GroupFinishedHandler, options: TaskHandlerOptions = {}): void {
    this.register(joinTaskType(type), (data, context) => handler(data as GroupJoinData, context), options);
  }

  /**
   * Submits a task; a task whose id exists (or finished within the retention window) is kept and returned instead.
   * With `transaction`, inside the application's own database transaction (see `TaskSubmits.submitIn`).
   */
  async submit(input: SubmitInput, transaction?: SqlTransaction): Promise<TaskRecord> {
    return (await (transaction === undefined ? this.submits.submit(input) : this.submits.submitIn(transaction, input))).task;
  }

  /**
   * Submits each of `inputs` as {@link TaskWorker.submit} does, after checking them all: a bad one throws naming its
   * place (`inputs[3]`) and the field, and nothing is submitted. Outside a transaction the submits go out together
   * (on Redis, up to 256 in one script call); in `transaction`, one after another. Answers the tasks in `inputs`'
   * order. A store that fails partway leaves the earlier ones submitted; their ids make a retry of the whole list safe.
   */
  async submitMany(inputs: readonly SubmitInput[], transaction?: SqlTransaction): Promise<TaskRecord[]> {
    checkInputs(inputs, (input) => this.submits.check(input));
    const tasks: TaskRecord[] = [];
    if (transaction !== undefined) {
      for (const input of inputs) tasks.push((await this.submits.submitIn(transaction, input)).task);
      return tasks;
    }
    // A thousand at a time: what is in flight stays bounded however many are given.
    for (let at = 0; at < inputs.length; at += SUBMITS_AT_ONCE) {
      const submitted = await Promise.all(inputs.slice(at, at + SUBMITS_AT_ONCE).map((input) => this.submits.submit(input)));
      for (const { task } of submitted) tasks.push(task);
    }
    return tasks;
  }

  /** Starts claiming: now, on every signal of new work of its types, and every scan interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.watchTypes();
    // Lapsed leases, any signal that was lost, and stragglers to count (in one call where the store can).
    this.timer = setInterval(() => this.claims.scanned(), this.options.scanMs ?? 5_000);
    this.timer.unref();
    const purgeMs = this.options.purgeMs ?? 60_000;
    if (purgeMs > 0) {
      this.purgeTimer = setInterval(() => {
        void purgeExpired(this.store, this.options.clock.now(), retentionOf(this.options)).catch((error) => this.options.onError?.(error, 'purge'));
      }, purgeMs);
      this.purgeTimer.unref();
    }
    this.claims.start();
  }

  /**
   * Stops claiming, lets running handlers finish for up to `drainMs`, then tells the rest (their signal fires) and
   * hands their tasks back at once (pending again, with no attempt used up).
   */
  async stop(drainMs = 10_000): Promise<void> {
    this.stopping = true;
    const claiming = this.claims.stop();
    clearInterval(this.timer);
    clearInterval(this.purgeTimer);
    this.unwatch?.();
    await claiming;
    await this.runs.drain(drainMs);
  }

  /** The tasks this node runs now. */
  runningTasks(): string[] {
    return this.runs.ids();
  }

  private register(type: string, run: (data: unknown, context: TaskContext) => unknown, options: TaskHandlerOptions): void {
    if (this.handlers.has(type)) throw new Error(`A handler for task type "${type}" is registered already`);
    this.handlers.set(type, registration(type, run, options, this.options.clockSkewMs));
    if (this.started && !this.stopping) this.watchTypes();
    this.claims.typesChanged();
  }

  /**
   * Hears of new work of the types it has handlers for, and of no other (the store sends it nothing else). On a new
   * type the new watch starts before the old one ends: the claim loop's next query waits until it is in place.
   */
  private watchTypes(): void {
    const before = this.unwatch;
    this.unwatch = this.store.watch((_type, _id, task) => this.claims.heard(task), [...this.handlers.keys()], {
      listener: (_type, id, claim) => this.claims.heardClaim(id, claim),
      except: this.actor.instance, // its own are counted as they land
    });
    before?.();
  }
}
