import { parseDuration } from '../core/duration';
import type { TaskRecord } from '../store/tasks/task';
import { encodeTask } from '../store/tasks/task.codec';
import { decideRenew, type TaskActor } from './task-claim.rules';
import type { TaskFencing } from './task-fencing';
import type { Registration, TaskContext } from './task-handler';
import { groupId } from './task-id.rules';
import type { RunEnd, TaskOutcome } from './task-outcome.rules';
import { invalidTaskInput } from '../core/errors/input.errors';
import { failTransaction } from '../store/sql-transaction';
import { outcomeOf, type TaskOutcomes } from './task-outcomes';
import type { VersionedTask } from '../store/tasks/task-store';
import type { TaskSubmits } from './task-submits';
import type { TaskWorkerOptions } from './task-worker.options';
import { LeaseLostError } from '../core/errors/lease-lost.error';
import { leaseExpired } from './errors/task.errors';

/** A run of a claimed task on this node. */
interface Run {
  /** Ends the run early: its lease was lost, or the node shuts down (its signal, if the handler asked for one, fires). */
  stop(reason: Error): void;
  done: Promise<void>;
  /** The handler returned or threw. */
  settled: boolean;
  /** Shutdown handed its task back before it ended: nothing it returns later is written. */
  handedBack: boolean;
  /** Releases the claim at once, fenced by the epoch, without waiting for the handler. */
  handBack(): Promise<void>;
}

/**
 * The claimed tasks this node runs: each handler under a lease it renews, aborted when the lease is lost, and its
 * outcome recorded once it ends. `wake` is told whenever a run frees its slot, so the node claims again.
 */
export class TaskRuns {
  private readonly running = new Map<string, Run>();

  constructor(
    private readonly fencing: TaskFencing,
    private readonly outcomes: TaskOutcomes,
    private readonly submits: TaskSubmits,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
    private readonly wake: () => void,
  ) {}

  /** The tasks this node runs now. */
  ids(): string[] {
    return [...this.running.keys()];
  }

  /** Whether this node runs the task now. */
  has(id: string): boolean {
    return this.running.has(id);
  }

  /**
   * Handler slots free: a run takes one until its handler ends; then, while its outcome is written, it takes none (so
   * the next claim overlaps that write), with at most `2 × concurrency` runs, handlers and writes, at once.
   */
  freeSlots(concurrency: number): number {
    let handling = 0;
    for (const run of this.running.values()) if (!run.settled) handling++;
    return Math.max(0, Math.min(concurrency - handling, 2 * concurrency - this.running.size));
  }

  /** Runs a task this node just claimed, under its lease, and records how it ended. */
  launch(task: TaskRecord, registration: Registration): void {
    const epoch = task.claim!.epoch;
    const subgroups = new Set<string>();
    // The value this run last wrote: its next fenced write compares against it without reading first.
    let known: VersionedTask = { task, raw: encodeTask(task) };
    // Why the run ended early, once it did. Its abort signal is made only when the handler asks for it: most handlers
    // never do, and an AbortController with its listener costs more than the rest of a short run's bookkeeping.
    let stopped: Error | undefined;
    // What completeIn wrote in the handler's transaction, once it did: the run then ends as that says, if it committed.
    let completedIn: { written: VersionedTask; end: RunEnd } | undefined;
    let controller: AbortController | undefined;
    let expiry: NodeJS.Timeout | undefined;
    const armExpiry = (expiresAt: number) => {
      clearTimeout(expiry);
      const left = expiresAt - this.options.clockSkewMs - this.options.clock.now();
      expiry = setTimeout(() => run.stop(leaseExpired(task.id, epoch, 'the lease ran out before it was renewed')), Math.max(0, left));
      expiry.unref();
    };
    const run: Run = {
      settled: false,
      handedBack: false,
      done: Promise.resolve(),
      handBack: () => this.outcomes.handBack(task.id, epoch, known),
      stop: (reason) => {
        if (stopped) return;
        stopped = reason;
        controller?.abort(reason);
        // A run whose lease is lost no longer holds its task, even if its handler ignores the abort and runs on: it
        // leaves the running set, so this node too may claim the task again, and shutdown does not wait for it.
        if ((reason instanceof LeaseLostError && reason.kind === 'task') && this.running.get(task.id) === run) {
          this.running.delete(task.id);
          this.wake();
        }
      },
    };
    armExpiry(task.claim!.expiresAt);
    const context: TaskContext = {
      task,
      epoch,
      attempt: task.attempts.length,
      get expiresAt() {
        return known.task?.claim?.expiresAt ?? 0;
      },
      get signal() {
        if (!controller) {
          controller = new AbortController();
          if (stopped) controller.abort(stopped);
        }
        return controller.signal;
      },
      renewLease: async (lease) => {
        const leaseMs = lease === undefined ? registration.leaseMs : parseDuration(lease, `task ${task.id}`, 'renewLease(lease)');
        if (stopped) throw stopped;
        const renewed = await this.fencing.fenced(task.id, epoch, (current, now) => decideRenew(current, this.actor, epoch, now, leaseMs, this.options.clockSkewMs), known);
        if (renewed.outcome !== 'ok') {
          const error = leaseExpired(task.id, epoch, renewed.message);
          run.stop(error);
          throw error;
        }
        known = { task: renewed.task, raw: encodeTask(renewed.task) };
        armExpiry(renewed.task.claim!.expiresAt);
      },
      completeIn: async (transaction, result, options = {}) => {
        const end: RunEnd = { outcome: { kind: 'done', result: result === undefined ? null : result }, subgroups: [...subgroups] };
        try {
          if (stopped) throw stopped;
          if (completedIn) throw invalidTaskInput(task.id, 'completeIn', 'was called already in this run');
          const maxIdleMs = options.maxIdle === undefined ? undefined : parseDuration(options.maxIdle, `task ${task.id}`, 'completeIn maxIdle');
          completedIn = { written: await this.outcomes.finishIn(transaction, task, epoch, end, registration, known), end };
          if (maxIdleMs !== undefined) await transaction.query(`SELECT set_config('idle_in_transaction_session_timeout', $1, true)`, [String(maxIdleMs)]);
        } catch (error) {
          // Whatever refused the completion, the transaction must not commit the handler's writes without it.
          await failTransaction(transaction, error instanceof Error ? error.message : String(error));
          throw error;
        }
      },
      submit: async (input) => {
        const { created, task: sub } = await this.submits.submit({ ...input, parent: input.parent ?? task.id, ...(input.parent === undefined && { parentRun: task.seq }) });
        // Groups of this run of the parent (any attempt, even one whose node died): not a group whose tasks were
        // all remembered from an earlier run (rerunFinished) — it joined then, and will not join again for this one.
        const ofThisRun = created || sub.parentRun === task.seq;
        if (ofThisRun && sub.group && sub.parent === task.id) subgroups.add(groupId(sub.type, sub.group.name));
        return sub;
      },
    };
    this.options.onEvent?.({ kind: 'claimed', task, epoch });
    this.running.set(task.id, run);
    run.done = (async () => {
      let outcome: TaskOutcome;
      try {
        const result = await registration.run(task.data, context);
        outcome = { kind: 'done', result: result === undefined ? null : result };
      } catch (error) {
        outcome = outcomeOf(error);
      }
      run.settled = true;
      this.wake(); // its slot is free while the outcome is written
      clearTimeout(expiry);
      if (completedIn) {
        // Completed in the handler's transaction: that is the outcome if it committed, whatever the lease says now.
        if (await this.outcomes.committed(completedIn.written, epoch, completedIn.end)) return;
        const read = await this.fencing.readBack(task.id);
        if (read) known = read;
        outcome = { kind: 'failed', error: `the transaction task ${task.id} was completed in did not commit${outcome.kind === 'done' ? '' : `: ${outcome.error}`}` };
      }
      if (stopped instanceof LeaseLostError && stopped.kind === 'task') {
        this.options.onEvent?.({ kind: 'rejected', id: task.id, epoch, reason: stopped.message }); // another node may hold it
        return;
      }
      if (run.handedBack) return; // shutdown handed it back before it ended
      await this.outcomes.finish(task, epoch, { outcome, subgroups: [...subgroups] }, registration, known);
    })()
      .catch((error) => this.options.onError?.(error, `task ${task.id}`))
      .finally(() => {
        if (this.running.get(task.id) === run) this.running.delete(task.id);
        this.wake();
      });
  }

  /**
   * Lets the runs finish for up to `drainMs`, then tells the rest (their signal fires) and hands their tasks back at
   * once (pending again, with no attempt used up).
   */
  async drain(drainMs: number): Promise<void> {
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
        run.stop(new Error('this node is shutting down'));
        return run.handBack();
      }),
    );
  }
}
