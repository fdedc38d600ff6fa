import type { Clock } from '../core/clock';
import { parseDuration } from '../core/duration';
import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import type { DurationInput } from '../permits/semaphore-definition';
import { FINISHED_STATES, type BackoffPolicy, type GroupJoinData, type TaskRecord } from './task';
import { ReadyList } from './ready-list';
import { purgeExpired } from './task-admin';
import { encodeTask } from './task.codec';
import { InvalidTaskError } from './errors/invalid-task.error';
import { LeaseExpiredError } from './errors/lease-expired.error';
import { RetryLaterError } from './errors/retry-later.error';
import type { TaskStore, VersionedTask } from './task-store';
import type { TaskEvent } from './task-events';
import { compareReady, decideClaim, decideRenew, DEFAULT_MAX_ATTEMPTS, type TaskActor } from './task-claim.rules';
import { counted, newGroupRecord, groupStoppedFast, decideGroupProgress, decideParentJoin, groupEnd, joinTask, recordSubgroupJoin } from './task-group.rules';
import { groupId, joinedType, joinIdOf, joinTaskType, taskId } from './task-id.rules';
import { decideCancel, decideFinish, type RunEnd, type TaskOutcome } from './task-outcome.rules';
import { decideSubmit, type SubmitInput } from './task-submit.rules';

/** What a handler gets besides the task's data. */
export interface TaskContext {
  /** The task as claimed. */
  readonly task: TaskRecord;
  /** The claim's fencing token: pass it to stores that can reject a stale worker's writes. */
  readonly epoch: number;
  /** Which attempt this is, from 1. */
  readonly attempt: number;
  /** When the lease lapses unless renewed (epoch ms, this node's clock); moves with every renewal. */
  readonly expiresAt: number;
  /** Fires when the lease is lost (not renewed in time, cancelled, taken over) or the node shuts down. */
  readonly signal: AbortSignal;
  /**
   * Renews the lease for `lease` from now (ms or `'5m'`; default: the handler's lease); throws
   * {@link LeaseExpiredError} once it was lost (the task is another node's now: stop).
   */
  renewLease(lease?: DurationInput): Promise<void>;
  /** Submits a sub-task: this task is its parent, and its group's join then triggers this task type's join. */
  submit(input: SubmitInput): Promise<TaskRecord>;
}

/** Runs a task of one type; its return value is the result. */
export type TaskHandler = (data: unknown, context: TaskContext) => unknown;
/** Runs the join of a group of one type, with every task's result or error. */
export type GroupFinishedHandler = (join: GroupJoinData, context: TaskContext) => unknown;

/** How a type's tasks are run. */
export interface TaskHandlerOptions {
  /** The lease of a claim: renew within it. Default 30 s. */
  leaseMs?: number;
  /** Attempts (failed, retried or lapsed) before a task fails for good, unless its submit named a number. Default 3. */
  maxAttempts?: number;
  /** Retry backoff. Default 1 s doubling up to 1 min. */
  backoff?: BackoffPolicy;
}

/** Timing and hooks of a {@link TaskWorker}. */
export interface TaskWorkerOptions {
  /** Where time is read (claims, leases, backoff, retention). */
  clock: Clock;
  /** The clock-skew bound: another node's claim counts as live until its expiry plus this. */
  clockSkewMs: number;
  /** How long a finished task's id is remembered (a submit of it is ignored meanwhile). Default 24 h. */
  retentionMs?: number;
  /**
   * Handlers run at once by this node. Default 4. A handler that ended frees its slot while its outcome is written;
   * one whose lease was lost (it ignored its abort signal) no longer holds its task, nor its slot.
   */
  concurrency?: number;
  /** How often it looks for work without being told (new work is signalled; this finds abandoned tasks). Default 5 s. */
  scanMs?: number;
  /** How often it removes tasks finished longer than the retention window ago. Default 1 min; 0: never. */
  purgeMs?: number;
  /** Called for a task that ended invalid (default: nothing but the state and the count in its group). */
  onInvalid?(task: TaskRecord, error: string): void;
  /** Called when something failed and is retried. */
  onError?(error: unknown, what: string): void;
  /** Hears every claim and every run's end on this node (see {@link TaskEvent}). Must not throw. */
  onEvent?(event: TaskEvent): void;
}

/** How often, at most, a signal without its task (or the scan) makes a node query again. */
const READY_REFRESH_MS = 100;
/** Candidates one query returns to a node. */
const READY_LIMIT = 256;
/** Candidates a node keeps, from queries and events. */
const READY_CAPACITY = 1_024;

/** Stragglers one scan reads (the Hazelcast store transfers every match anyway), and how many it counts. */
const STRAGGLERS_READ = 5_000;
const STRAGGLERS_PER_PASS = 50;

const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, factor: 2, maxMs: 60_000 };

interface Registration {
  readonly run: (data: unknown, context: TaskContext) => unknown;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
}

/**
 * One node's part in leased distributed tasks (seed 004): submits with idempotent ids, claims the types it has
 * handlers for (highest priority first, then submit order) when told of new work and on a slow scan that also
 * finds tasks whose lease lapsed, runs each under a lease it renews, and records the outcome with a write fenced by
 * the claim's epoch. Grouped tasks count into their group's record, whose finishing write submits the join once;
 * a join of sub-tasks then triggers their parent's join.
 */
export class TaskWorker {
  private readonly handlers = new Map<string, Registration>();
  private readonly running = new Map<string, Run>();
  private unwatch?: () => void;
  private timer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  /** The last submit order this process gave (see {@link submitTask}). */
  private lastSeq = 0;
  private filling?: Promise<void>;
  private again = false;
  /**
   * Claimable tasks as a query found them and events told since, in claim order: claimed from the head, so a task
   * an event brought is claimed with no query at all (a stale entry only fails its compare-and-set). Queried again
   * when it holds nothing it can vouch for (see {@link ReadyList}), after a claim failed, after four rounds of claims
   * others won, and when the scan comes round.
   */
  private readonly ready = new ReadyList(READY_CAPACITY);
  private readyAt = 0;
  /** The scan came round: query, at most every {@link READY_REFRESH_MS}. */
  private signalled = true;
  /** Query at once: the list holds nothing it can vouch for, or a claim failed (its candidate left the list). */
  private refresh = true;
  /** Wakes the node when the first task it holds that is backing off becomes due. */
  private dueTimer?: NodeJS.Timeout;
  private started = false;
  private stopping = false;
  /** A straggler scan in progress (scans never overlap). */
  private counting = false;
  /** The last straggler a scan took: the next scan goes on after it. */
  private lastStraggler?: TaskRecord;

  constructor(
    private readonly store: TaskStore,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
  ) {}

  /** Runs tasks of `type` with `handler` (one handler per type; a node without one never claims the type). */
  handle(type: string, handler: TaskHandler, options: TaskHandlerOptions = {}): void {
    this.register(type, handler, options);
  }

  /** Runs the joins of groups of `type` with `handler`. */
  onGroupFinished(type: string, handler: GroupFinishedHandler, options: TaskHandlerOptions = {}): void {
    this.register(joinTaskType(type), (data, context) => handler(data as GroupJoinData, context), options);
  }

  /** Submits a task; a task whose id exists (or finished within the retention window) is kept and returned instead. */
  async submit(input: SubmitInput): Promise<TaskRecord> {
    return (await this.submitTask(input)).task;
  }

  /** A submit, and whether it created the task (or found it). */
  private async submitTask(input: SubmitInput): Promise<{ created: boolean; task: TaskRecord }> {
    const id = taskId(input); // bad input fails here, naming the field, before any call
    // A new id is created in one call (put-if-absent); only an id that exists is read and decided on.
    let read: VersionedTask = { task: undefined, raw: null };
    for (;;) {
      const now = this.options.clock.now();
      // Submit order, unique and increasing within this process even for many submits in one millisecond.
      this.lastSeq = Math.max(now * 1000, this.lastSeq + 1);
      const decision = decideSubmit(read.task, { ...input, seq: this.lastSeq }, now, this.retentionMs());
      if (decision.outcome === 'exists') return { created: false, task: decision.task };
      let task = decision.task;
      // A task of a group that already stopped at a failure is not run (one read, only for groups that asked to fail fast).
      if (input.group?.failGroupFast && groupStoppedFast((await this.store.readGroup(groupId(input.type, input.group.name))).group)) task = decideCancel(task, now) ?? task;
      if (await this.store.compareAndSet(id, read, task)) return { created: true, task };
      read = await this.store.read(id);
    }
  }

  /** Starts claiming: now, on every signal of new work of its types, and every scan interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.unwatch = this.store.watch((type, _id, task) => {
      if (task) this.ready.offer(task, this.options.clock.now());
      else this.ready.markIncomplete(); // heard of work it could not read: ask the store
      this.kick();
    }, (type) => this.handlers.has(type));
    this.timer = setInterval(() => {
      this.signalled = true; // lapsed leases, and any signal that was lost
      this.kick();
      void this.countStragglers().catch((error) => this.options.onError?.(error, 'group count'));
    }, this.options.scanMs ?? 5_000);
    this.timer.unref();
    const purgeMs = this.options.purgeMs ?? 60_000;
    if (purgeMs > 0) {
      this.purgeTimer = setInterval(() => {
        void purgeExpired(this.store, this.options.clock.now(), this.retentionMs()).catch((error) => this.options.onError?.(error, 'purge'));
      }, purgeMs);
      this.purgeTimer.unref();
    }
    this.kick();
  }

  /**
   * Stops claiming, lets running handlers finish for up to `drainMs`, then tells the rest (their signal fires) and
   * hands their tasks back at once (pending again, with no attempt used up).
   */
  async stop(drainMs = 10_000): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    clearInterval(this.purgeTimer);
    clearTimeout(this.dueTimer);
    this.unwatch?.();
    await this.filling;
    const runs = [...this.running.values()];
    const all = Promise.allSettled(runs.map((r) => r.done));
    const drained = await Promise.race([all.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), drainMs).unref())]);
    if (drained) return;
    // The rest are handed back at once: a handler that ignores its abort signal cannot hold shutdown, and whatever it
    // returns later is not written (its claim is gone, so the epoch fence would refuse it anyway).
    await Promise.allSettled(
      runs.map((run) => {
        if (run.settled) return run.done; // it ended on its own: its outcome is being recorded as it is
        run.handedBack = true;
        run.controller.abort(new Error('this node is shutting down'));
        return run.handBack();
      }),
    );
  }

  /** The tasks this node runs now. */
  runningTasks(): string[] {
    return [...this.running.keys()];
  }

  private register(type: string, run: (data: unknown, context: TaskContext) => unknown, options: TaskHandlerOptions): void {
    if (this.handlers.has(type)) throw new Error(`A handler for task type "${type}" is registered already`);
    const leaseMs = options.leaseMs ?? 30_000;
    if (leaseMs <= this.options.clockSkewMs) {
      // Such a claim would never vouch for its run on this node's clock: it would be handed back as soon as it landed.
      throw new InvalidDefinitionError(`<task ${type}>`, 'lease', `must be longer than the clock-skew bound (${this.options.clockSkewMs} ms), got ${leaseMs} ms`);
    }
    this.handlers.set(type, { run, leaseMs, maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, backoff: options.backoff ?? DEFAULT_BACKOFF });
    this.ready.markIncomplete(); // the list never asked for this type
    if (this.started) this.kick();
  }

  private retentionMs(): number {
    return this.options.retentionMs ?? 24 * 3_600_000;
  }

  private kick(): void {
    if (!this.started || this.stopping) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    this.filling = this.fill()
      .catch((error) => this.options.onError?.(error, 'claim'))
      .finally(() => {
        this.filling = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Claims until the node runs `concurrency` handlers or nothing claimable is left. A round where others won every
   * race takes the next candidates at once; after four such rounds the node asks the store again 100 ms later.
   */
  private async fill(): Promise<void> {
    const concurrency = this.options.concurrency ?? 4;
    let lostRounds = 0;
    while (!this.stopping && this.freeSlots(concurrency) > 0) {
      if (lostRounds >= 4) {
        // Others won every race, four rounds running: ask again a little later rather than spin on a stale list.
        this.signalled = true;
        this.wakeLater(this.options.clock.now());
        return;
      }
      const now = this.options.clock.now();
      const query = this.queryDue(now);
      if (query) {
        this.refresh = false;
        this.signalled = false;
        this.readyAt = now;
        const mark = this.ready.beginQuery();
        let found: TaskRecord[];
        try {
          found = await this.store.claimable([...this.handlers.keys()], now, now - this.options.clockSkewMs, READY_LIMIT);
        } catch (error) {
          this.signalled = true; // asked again a little later, not only at the next scan
          this.wakeLater(now);
          throw error;
        }
        this.ready.replace(found, READY_LIMIT, mark, now);
        if (this.stopping) return;
      }
      // As many claims at once as there are free slots: each is one compare-and-set.
      const batch = this.ready.take(this.freeSlots(concurrency), concurrency, now, (id) => this.running.has(id));
      if (batch.length === 0) {
        if (!query && this.ready.incomplete) {
          // Nothing left it can vouch for: the store may hold more. Asked at once, unless it asked just now.
          if (now - this.readyAt >= READY_REFRESH_MS) {
            this.refresh = true;
            continue;
          }
          this.signalled = true;
        }
        this.wakeLater(now);
        return;
      }
      // Every claim settles before the next round (one that throws must not free its slot while others still land).
      const outcomes = await Promise.allSettled(batch.map((candidate) => this.claim(candidate)));
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') continue;
        this.refresh = true; // its candidate left the list with the claim that failed: ask the store next time
        this.options.onError?.(outcome.reason, 'claim');
      }
      lostRounds = outcomes.some((o) => o.status === 'fulfilled' && o.value) ? 0 : lostRounds + 1;
    }
  }

  /**
   * Handler slots free: a run takes one until its handler ends; then, while its outcome is written, it takes none (so
   * the next claim overlaps that write), with at most `2 × concurrency` runs, handlers and writes, at once.
   */
  private freeSlots(concurrency: number): number {
    let handling = 0;
    for (const run of this.running.values()) if (!run.settled) handling++;
    return Math.max(0, Math.min(concurrency - handling, 2 * concurrency - this.running.size));
  }

  /**
   * Whether to ask the store: the list has nothing it can vouch for, or a claim failed, or the scan (or four rounds of
   * claims others won) asks, at most every {@link READY_REFRESH_MS}.
   */
  private queryDue(now: number): boolean {
    return this.refresh || (this.signalled && now - this.readyAt >= READY_REFRESH_MS);
  }

  /** With nothing to claim now: wakes the node when a task it holds ends its backoff, or a held-off query is due. */
  private wakeLater(now: number): void {
    if (this.stopping) return;
    const due = [this.ready.nextDueAt(), this.signalled ? this.readyAt + READY_REFRESH_MS : undefined].filter((at) => at !== undefined);
    if (due.length === 0) return;
    clearTimeout(this.dueTimer);
    this.dueTimer = setTimeout(() => this.kick(), Math.max(0, Math.min(...due) - now));
    this.dueTimer.unref();
  }

  /**
   * Decides and compare-and-sets a claim against the task as the query found it (one round trip; a task changed
   * since simply fails the compare); starts the run if it landed.
   */
  private async claim(found: TaskRecord): Promise<boolean> {
    const registration = this.handlers.get(found.type);
    if (!registration) return false;
    const read: VersionedTask = { task: found, raw: encodeTask(found) };
    const decision = decideClaim(found, this.actor, this.options.clock.now(), registration.leaseMs, this.options.clockSkewMs, registration.maxAttempts);
    if (decision.outcome === 'exhausted') {
      if (await this.store.compareAndSet(found.id, read, decision.task)) await this.progress(decision.task);
      return false;
    }
    if (decision.outcome !== 'claimed') return false;
    let landed: boolean;
    try {
      landed = await this.store.compareAndSet(found.id, read, decision.task);
    } catch (error) {
      // The answer was lost: the claim may have landed. If the task is held under this claim, run it now rather than
      // leave it to lapse (and use up an attempt).
      const again = await this.readBack(found.id);
      landed = again?.task?.claim?.epoch === decision.claim.epoch && again.task.claim.instance === this.actor.instance;
      if (!landed) throw error;
    }
    if (!landed) return false;
    // The answer may come back late (a pause, a slow link): a claim whose lease no longer vouches by this node's clock
    // may be another node's already, so it is never run; it is handed back, fenced by its epoch (a no-op if taken).
    if (decision.task.claim!.expiresAt - this.options.clockSkewMs <= this.options.clock.now()) {
      await this.handBack(found.id, decision.claim.epoch, { task: decision.task, raw: encodeTask(decision.task) }).catch((error) => this.options.onError?.(error, `hand back ${found.id}`));
      return false;
    }
    this.launch(decision.task, registration);
    return true;
  }

  private launch(task: TaskRecord, registration: Registration): void {
    const controller = new AbortController();
    const epoch = task.claim!.epoch;
    const subgroups = new Set<string>();
    // The value this run last wrote: its next fenced write compares against it without reading first.
    let known: VersionedTask = { task, raw: encodeTask(task) };
    let expiry: NodeJS.Timeout | undefined;
    const armExpiry = (expiresAt: number) => {
      clearTimeout(expiry);
      const left = expiresAt - this.options.clockSkewMs - this.options.clock.now();
      expiry = setTimeout(() => controller.abort(new LeaseExpiredError(task.id, epoch, 'the lease ran out before it was renewed')), Math.max(0, left));
      expiry.unref();
    };
    armExpiry(task.claim!.expiresAt);
    const context: TaskContext = {
      task,
      epoch,
      attempt: task.attempts.length,
      get expiresAt() {
        return known.task?.claim?.expiresAt ?? 0;
      },
      signal: controller.signal,
      renewLease: async (lease) => {
        const leaseMs = lease === undefined ? registration.leaseMs : parseDuration(lease, `task ${task.id}`, 'renewLease(lease)');
        if (controller.signal.aborted) throw controller.signal.reason;
        const renewed = await this.fenced(task.id, epoch, (current, now) => decideRenew(current, this.actor, epoch, now, leaseMs, this.options.clockSkewMs), known);
        if (renewed.outcome !== 'ok') {
          const error = new LeaseExpiredError(task.id, epoch, renewed.message);
          controller.abort(error);
          throw error;
        }
        known = { task: renewed.task, raw: encodeTask(renewed.task) };
        armExpiry(renewed.task.claim!.expiresAt);
      },
      submit: async (input) => {
        const { created, task: sub } = await this.submitTask({ ...input, parent: input.parent ?? task.id, ...(input.parent === undefined && { parentRun: task.seq }) });
        // Groups of this run of the parent (any attempt, even one whose node died): not a group whose tasks were
        // all remembered from an earlier run (rerunFinished) — it joined then, and will not join again for this one.
        const ofThisRun = created || sub.parentRun === task.seq;
        if (ofThisRun && sub.group && sub.parent === task.id) subgroups.add(groupId(sub.type, sub.group.name));
        return sub;
      },
    };
    this.options.onEvent?.({ kind: 'claimed', task, epoch });
    const run: Run = { controller, settled: false, handedBack: false, done: Promise.resolve(), handBack: () => this.handBack(task.id, epoch, known) };
    run.done = (async () => {
      let outcome: TaskOutcome;
      try {
        const result = await registration.run(task.data, context);
        outcome = { kind: 'done', result: result === undefined ? null : result };
      } catch (error) {
        outcome = outcomeOf(error);
      }
      run.settled = true;
      this.kick(); // its slot is free while the outcome is written
      clearTimeout(expiry);
      if (controller.signal.aborted && controller.signal.reason instanceof LeaseExpiredError) {
        this.options.onEvent?.({ kind: 'rejected', id: task.id, epoch, reason: controller.signal.reason.message }); // another node may hold it
        return;
      }
      if (run.handedBack) return; // shutdown handed it back before it ended
      await this.finish(task, epoch, { outcome, subgroups: [...subgroups] }, registration, known);
    })()
      .catch((error) => this.options.onError?.(error, `task ${task.id}`))
      .finally(() => {
        if (this.running.get(task.id) === run) this.running.delete(task.id);
        this.kick();
      });
    this.running.set(task.id, run);
    // A run whose lease is lost no longer holds its task, even if its handler ignores the abort and runs on: it
    // leaves the running set, so this node too may claim the task again, and shutdown does not wait for it.
    controller.signal.addEventListener('abort', () => {
      if (controller.signal.reason instanceof LeaseExpiredError && this.running.get(task.id) === run) {
        this.running.delete(task.id);
        this.kick();
      }
    });
  }

  /** Records the outcome, fenced by the epoch; then the group's progress and, once, its join. */
  private async finish(task: TaskRecord, epoch: number, end: RunEnd, registration: Registration, known: VersionedTask): Promise<void> {
    const finished = await this.fenced(task.id, epoch, (current, now) => decideFinish(current, this.actor, epoch, end, now, registration.backoff, registration.maxAttempts), known);
    if (finished.outcome !== 'ok') {
      this.options.onEvent?.({ kind: 'rejected', id: task.id, epoch, reason: finished.message }); // the new holder's outcome stands
      return;
    }
    const record = finished.task;
    const error = end.outcome.kind === 'done' ? '' : end.outcome.error;
    if (record.state === 'done') this.options.onEvent?.({ kind: 'completed', task: record, epoch });
    else if (record.state === 'pending') this.options.onEvent?.({ kind: 'retrying', task: record, epoch, error });
    else this.options.onEvent?.({ kind: record.state === 'invalid' ? 'invalid' : 'failed', task: record, epoch, error });
    if (record.state === 'invalid') this.options.onInvalid?.(record, end.outcome.kind === 'invalid' ? end.outcome.error : 'invalid');
    if (record.state === 'pending') return; // retried later
    if (record.uncounted) await this.progress(record);
  }

  /**
   * Grouped tasks that finished but were never counted into their group (their node died in between): counted now,
   * by whichever node's scan finds them, so every group gets its join.
   */
  private async countStragglers(): Promise<void> {
    if (this.stopping || this.counting) return;
    this.counting = true;
    try {
      const found = await this.store.uncounted([...this.handlers.keys()], STRAGGLERS_READ);
      // A pass takes up to STRAGGLERS_PER_PASS, after the last one the previous pass took (claim order, wrapping): the
      // first ones may be blocked for long (a join of an earlier round not run yet), and must not hide the rest.
      const last = this.lastStraggler;
      const from = last ? found.findIndex((task) => compareReady(task, last) > 0) : 0;
      const pass = [...found.slice(Math.max(from, 0)), ...found.slice(0, Math.max(from, 0))].slice(0, STRAGGLERS_PER_PASS);
      for (const task of pass) {
        this.lastStraggler = task;
        await this.progress(task).catch((error) => this.options.onError?.(error, `count ${task.id}`)); // one bad record blocks no other
      }
    } finally {
      this.counting = false;
    }
  }

  /**
   * Tells a group or parent of a finished task's end (idempotent: telling it again changes nothing), then clears the
   * task's mark; the write that finds the group (or parent) finished submits its join, once. A join that must wait
   * (a join of an earlier round or run still holds its id) leaves the mark, and a later scan tries again.
   */
  private async progress(task: TaskRecord): Promise<void> {
    if (task.group && !(await this.countInGroup(task))) return;
    if (!task.group && joinedType(task.type) !== undefined && task.parent) await this.joinParent(task);
    if (decideParentJoin(task, 0) && !(await this.submitParentJoin(task.id))) return;
    for (;;) {
      const read = await this.store.read(task.id);
      // Only the run that was counted: a later run (an operator's retry) keeps its own mark.
      if (!read.task?.uncounted || read.task.finishedAt !== task.finishedAt) return;
      if (await this.store.compareAndSet(task.id, read, counted(read.task))) return;
    }
  }

  /** Counts a grouped task into its group's record; false when its group's join has to wait (see `createJoin`). */
  private async countInGroup(task: TaskRecord): Promise<boolean> {
    const id = groupId(task.type, task.group!.name);
    for (;;) {
      const read = await this.store.readGroup(id);
      const progress = decideGroupProgress(read.group, task, this.options.clock.now());
      if (!read.group) {
        // The record is created empty first: its generation (which its joins name) is then the one every node
        // reads, never one a node made up and lost to another's create.
        await this.store.compareAndSetGroup(id, read, newGroupRecord(task));
        continue;
      }
      const same = JSON.stringify(read.group.finished[String(task.group!.number)]) === JSON.stringify(progress.group.finished[String(task.group!.number)]);
      if (same && !progress.join && progress.group.round === read.group.round) {
        // Counted already (a write whose answer was lost, a node that died after it): the stop may not have been.
        if (groupStoppedFast(read.group)) await this.stopGroup(task, progress.cancel);
        return true;
      }
      // The join first (its id is one per group, so creating it twice makes one task), then the mark on the group:
      // a group marked joined always has its join, whatever fails in between.
      if (progress.join && !(await this.createJoin(progress.join, progress.joinOf!, progress.group.parent))) return false;
      if (!(await this.store.compareAndSetGroup(id, read, progress.group))) continue;
      if (groupStoppedFast(progress.group)) await this.stopGroup(task, progress.cancel);
      return true;
    }
  }

  /** The rest of a group that stopped at a failure: every task of it not ended yet, whether or not the total is known. */
  private async stopGroup(task: TaskRecord, numbers: readonly number[]): Promise<void> {
    // Still stopped now (an operator's retry may have reopened it since it was read): else nothing is cancelled.
    if (!groupStoppedFast((await this.store.readGroup(groupId(task.type, task.group!.name))).group)) return;
    const waiting = (await this.store.query({ types: [task.type], group: task.group!.name })).filter((t) => !FINISHED_STATES.has(t.state)).map((t) => t.id);
    const numbered = numbers.map((number) => `${task.type}:${task.group!.name}:${number}`);
    const why = `its group ${groupId(task.type, task.group!.name)} stopped at a failure (failGroupFast)`;
    for (const other of new Set([...waiting, ...numbered])) await this.cancel(other, why);
  }

  /**
   * A join of one of a parent's sub-groups ended: the parent records it, and the write that finds the parent
   * finished with every sub-group joined submits the parent's own join (created first, so it is never lost). If that
   * join has to wait, the parent is marked instead (`uncounted`), and a scan submits it later.
   */
  private async joinParent(join: TaskRecord): Promise<void> {
    const data = join.data as GroupJoinData;
    const id = groupId(data.type, data.group);
    for (;;) {
      const read = await this.store.read(join.parent!);
      if (!read.task) return; // the parent was purged: nobody waits for this
      if (JSON.stringify(read.task.subgroups?.joined[id]) === JSON.stringify(groupEnd(join))) return; // recorded already
      const recorded = recordSubgroupJoin(read.task, id, groupEnd(join));
      const due = decideParentJoin(recorded, this.options.clock.now());
      const created = due ? await this.createJoin(due.join, due.joinOf, undefined) : false;
      const next = !due ? recorded : created ? due.parent : { ...recorded, uncounted: true as const };
      if (await this.store.compareAndSet(read.task.id, read, next)) return;
    }
  }

  /** A parent finished after all its sub-groups joined: its own join, once (created before the mark); false if it has to wait. */
  private async submitParentJoin(id: string): Promise<boolean> {
    for (;;) {
      const read = await this.store.read(id);
      const due = read.task && decideParentJoin(read.task, this.options.clock.now());
      if (!due) return true;
      if (!(await this.createJoin(due.join, due.joinOf, undefined))) return false;
      if (await this.store.compareAndSet(id, read, counted(due.parent))) return true;
    }
  }

  /**
   * Creates a join unless it is there already (one id per group: idempotent), replacing a finished join of an
   * earlier round, group or run. False when that earlier join has not finished (or not been counted) yet: the caller
   * keeps its mark, and the join is created by a later scan, after the earlier one.
   */
  private async createJoin(join: GroupJoinData, joinOf: string, parent: string | undefined): Promise<boolean> {
    for (;;) {
      const id = joinIdOf(join, joinOf);
      const read = await this.store.read(id);
      const decision = joinTask(join, joinOf, parent, this.options.clock.now(), read.task);
      if (decision.outcome === 'exists') return true;
      if (decision.outcome === 'blocked') return false;
      if (await this.store.compareAndSet(id, read, decision.task)) return true;
    }
  }

  private async cancel(id: string, reason: string): Promise<void> {
    for (;;) {
      const read = await this.store.read(id);
      const next = read.task && decideCancel(read.task, this.options.clock.now(), reason, this.options.clockSkewMs);
      if (!next || (await this.store.compareAndSet(id, read, next))) return;
    }
  }

  /** At shutdown: a task whose handler did not finish goes back to pending at once, with the attempt not counted. */
  private async handBack(id: string, epoch: number, known: VersionedTask): Promise<void> {
    const back = await this.fenced(id, epoch, (current) => {
      const { claim: _claim, ...rest } = current;
      return { outcome: 'ok', task: { ...rest, state: 'pending', attempts: current.attempts.filter((a) => a.epoch !== epoch) } };
    }, known, true);
    if (back.outcome === 'ok') this.options.onEvent?.({ kind: 'handed-back', id, epoch });
  }

  /**
   * A decide-compare-and-set on the task, only while the claim `epoch` is still this node's: first against `known`
   * (what this run last wrote), then, if the task changed since, against what a read finds.
   */
  private async fenced(
    id: string,
    epoch: number,
    decide: (task: TaskRecord, now: number) => { outcome: 'ok'; task: TaskRecord } | { outcome: 'lease-lost'; message: string },
    known?: VersionedTask,
    checkClaim = false,
  ): Promise<{ outcome: 'ok'; task: TaskRecord } | { outcome: 'lease-lost'; message: string }> {
    let guess = known;
    for (;;) {
      const read: VersionedTask = guess ?? (await this.store.read(id));
      guess = undefined;
      if (!read.task) return { outcome: 'lease-lost', message: `task ${id} is gone` };
      if (checkClaim && (read.task.claim?.epoch !== epoch || read.task.claim.instance !== this.actor.instance)) {
        return { outcome: 'lease-lost', message: `task ${id} is no longer held under epoch ${epoch}` };
      }
      const decision = decide(read.task, this.options.clock.now());
      if (decision.outcome !== 'ok') return decision;
      try {
        if (await this.store.compareAndSet(id, read, decision.task)) return decision;
      } catch (error) {
        // The answer was lost: the write may have landed. The exact value written means it did; anything else is
        // decided on again (a claim lost since is refused then).
        const back = await this.readBack(id);
        if (!back) throw error;
        if (back.raw === encodeTask(decision.task)) return decision;
        guess = back;
      }
    }
  }

  /** Reads a task after a call whose answer was lost, a few times over about two seconds; `undefined` if it cannot. */
  private async readBack(id: string): Promise<VersionedTask | undefined> {
    for (let attempt = 0, waitMs = 100; attempt < 5; attempt++, waitMs *= 2) {
      try {
        return await this.store.read(id);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      }
    }
    return undefined;
  }
}

/** A run of a claimed task on this node. */
interface Run {
  readonly controller: AbortController;
  done: Promise<void>;
  /** The handler returned or threw. */
  settled: boolean;
  /** Shutdown handed its task back before it ended: nothing it returns later is written. */
  handedBack: boolean;
  /** Releases the claim at once, fenced by the epoch, without waiting for the handler. */
  handBack(): Promise<void>;
}

function outcomeOf(error: unknown): TaskOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidTaskError) return { kind: 'invalid', error: message };
  if (error instanceof RetryLaterError) return { kind: 'retry', error: message, ...(error.delayMs !== undefined && { delayMs: error.delayMs }) };
  return { kind: 'failed', error: message };
}
