/*
 * A task node, run as a real process by fault tests, and the settings that start it. As a process it is a
 * Nest application context with handlers written as users write them (`@TaskHandler`, `@GroupFinishedHandler`,
 * `@InvalidTaskHandler`, `@Cron` + `@OncePerTrigger`). Every run of a task is one run in the history (see history.ts):
 * `semaphore` is `task/<id>` and `token` the claim's epoch; `start` when the handler begins (valid until the lease's
 * expiry less the skew bound), an `effect` right after each `renewLease()` that succeeded (valid until the renewed
 * expiry), an `abort` when renewal threw, and an `end` when the handler returns. What `TaskService.events` says
 * (claimed, completed = outcome accepted, rejected = refused, ...) is written as `task` notes, and each join as a
 * `task` note of kind `joined`. SIGTERM closes the app (a graceful stop).
 *
 * Task types:
 * - `work` (data `{ ms }`): works `ms` ms in steps of `STEP_MS`, renewing the lease before each step.
 * - `recon-parent` (data `{ batches, failAt?, failGroupFast?, gate? }`): submits `batches` `recon-record-set` sub-tasks.
 * - `recon-record-set` (data `{ batch, fail?, gate? }`): a short step; `fail` throws InvalidTaskError. With `gate` (a
 *   file path) a batch that does not fail then holds, renewing its lease each step, until the test creates that file.
 * - joins of both, and `tick` (`@Cron` every 2 s, `@OncePerTrigger`).
 *
 * Imported by a test (not run), it only exports the settings and `startTaskNode`.
 */
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import type { Subscription } from 'rxjs';
import {
  GatekeeperModule, GroupFinishedHandler, InvalidTaskError, InvalidTaskHandler, LeaseLostError, OncePerTrigger, TaskHandler, TaskService,
  type GroupJoinData, type SubmitInput, type TaskContext, type TaskRecord,
} from '../../lib';
import { bootFixture, env, gatekeeperOptionsFromEnv, stopWhenOrphaned } from '../fixtures/fixture-process';
import { appendEvent, eventTime, type RunEvent, type TaskNoteEvent, type Unstamped } from './history';
import { nodeBasicsEnv, startNodeProcess, type NodeBasics, type NodeProcess } from './node-process';

/** Settings of one task node. */
export interface TaskNodeSettings extends NodeBasics {
  /** The lease of every type (ms). Default 2000. */
  leaseMs?: number;
  /** The tasks' scan interval (ms). Default 500. */
  scanMs?: number;
  /** Clock-skew bound (ms). Default 100. */
  maxClockSkewMs?: number;
  /** Tasks run at once. Default 4. */
  concurrency?: number;
  /** How long a `work` step takes between renewals (ms). Default 200. */
  stepMs?: number;
  /** Tasks this node submits once it is up (all nodes may submit the same ids). */
  submit?: SubmitInput[];
  /** Whether the `tick` schedule (`@Cron` every 2 s, `@OncePerTrigger`) runs. Default false. */
  ticks?: boolean;
  /** The process stops itself (gracefully) after this long, and at once if its test is gone. Default 3 minutes. */
  lifetimeMs?: number;
}

/** The environment a task node process reads. */
export function taskEnv(s: TaskNodeSettings): NodeJS.ProcessEnv {
  return {
    ...nodeBasicsEnv(s),
    LEASE_MS: String(s.leaseMs ?? 2_000),
    SCAN_MS: String(s.scanMs ?? 500),
    MAX_CLOCK_SKEW_MS: String(s.maxClockSkewMs ?? 100),
    CONCURRENCY: String(s.concurrency ?? 4),
    STEP_MS: String(s.stepMs ?? 200),
    SUBMIT: JSON.stringify(s.submit ?? []),
    TICKS: s.ticks ? '1' : '',
    LIFETIME_MS: String(s.lifetimeMs ?? 180_000),
  };
}

/** Starts this app as node `settings.name` and waits until it is READY (booted, claiming). */
export function startTaskNode(settings: TaskNodeSettings): Promise<NodeProcess> {
  return startNodeProcess(join(__dirname, 'task-app.ts'), settings.name, taskEnv(settings), settings.historyFile);
}

function main(): void {
  const historyFile = env('HISTORY_FILE');
  const nodeName = env('NODE_NAME');
  const leaseMs = Number(env('LEASE_MS'));
  const skewMs = Number(env('MAX_CLOCK_SKEW_MS'));
  const stepMs = Number(env('STEP_MS'));
  const submits = JSON.parse(env('SUBMIT')) as SubmitInput[];
  const run = (event: Unstamped<RunEvent>) => appendEvent(historyFile, event, nodeName);
  const note = (event: Omit<Unstamped<TaskNoteEvent>, 'type'>) => appendEvent<TaskNoteEvent>(historyFile, { type: 'task', ...event } as Unstamped<TaskNoteEvent>, nodeName);
  const base = (task: TaskContext) => ({ semaphore: `task/${task.task.id}`, job: task.task.id, token: task.epoch });
  /** Until when the claim vouches, by this node's clock (the same as real time here), less the skew bound. */
  const vouchedUntil = (task: TaskContext) => task.expiresAt - skewMs;

  /** A handler's run as a history run: start now; the caller records effects and the end. */
  const started = (task: TaskContext) => {
    run({ ...base(task), type: 'start', tick: task.attempt, validUntil: vouchedUntil(task), valid: Date.now() < vouchedUntil(task), grantedAt: task.task.claim?.claimedAt ?? Date.now() });
  };

  /** One step of work: `stepMs`, then a renewal (an `effect` if it held, an `abort` and the error if it did not). */
  const step = async (task: TaskContext) => {
    await sleep(stepMs);
    try {
      await task.renewLease();
    } catch (error) {
      run({ ...base(task), type: 'abort', reason: (error instanceof LeaseLostError && error.kind === 'task') ? `lease expired: ${error.message}` : String(error) });
      throw error;
    }
    // Made only while the claim still vouches, judged at its own stamp: a process paused (SIGSTOP) between its
    // renewal and here acts no more once thawed, as a handler that checks before it acts.
    const at = eventTime();
    if (at >= vouchedUntil(task)) {
      run({ ...base(task), at, type: 'abort', reason: 'the claim lapsed between its renewal and the effect (the process was paused)' });
      throw new Error('the claim lapsed before the effect');
    }
    run({ ...base(task), at, type: 'effect', valid: true, validUntil: vouchedUntil(task) });
  };

  @Injectable()
  class TaskNode implements OnApplicationBootstrap, OnModuleDestroy {
    private subscription?: Subscription;

    constructor(@Inject(TaskService) private readonly tasks: TaskService) {}

    async onApplicationBootstrap(): Promise<void> {
      this.subscription = this.tasks.events.subscribe((event) => {
        if ('task' in event) note({ kind: event.kind, id: event.task.id, epoch: event.epoch });
        else note({ kind: event.kind, id: event.id, epoch: event.epoch, ...(event.kind === 'rejected' && { detail: event.reason }) });
      });
      for (const input of submits) {
        const task = await this.tasks.submit(input);
        note({ kind: 'submitted', id: task.id, detail: task.seq });
      }
    }

    onModuleDestroy(): void {
      this.subscription?.unsubscribe();
    }

    @TaskHandler('work', { lease: leaseMs, maxAttempts: 10 })
    async work(data: { ms: number }, task: TaskContext): Promise<string> {
      started(task);
      for (let done = 0; done < data.ms; done += stepMs) await step(task);
      const at = eventTime();
      run({ ...base(task), at, type: 'end', outcome: 'done', valid: !task.signal.aborted && at < vouchedUntil(task) });
      return `${data.ms} ms of work by ${nodeName}`;
    }

    @TaskHandler('recon-parent', { lease: leaseMs })
    async split(data: { batches: number; failAt?: number; failGroupFast?: boolean; gate?: string }, task: TaskContext): Promise<string> {
      started(task);
      const group = task.task.name!;
      for (let i = 1; i <= data.batches; i++) {
        await task.submit({
          type: 'recon-record-set',
          group: { name: group, number: i, ...(i === data.batches && { total: data.batches }), ...(data.failGroupFast && { failGroupFast: true }) },
          data: { batch: i, ...(i === data.failAt && { fail: true }), ...(data.gate !== undefined && { gate: data.gate }) },
        });
      }
      const at = eventTime();
      run({ ...base(task), at, type: 'end', outcome: 'done', valid: !task.signal.aborted && at < vouchedUntil(task) });
      return `split into ${data.batches}`;
    }

    @TaskHandler('recon-record-set', { lease: leaseMs, maxAttempts: 3 })
    async reconcile(data: { batch: number; fail?: boolean; gate?: string }, task: TaskContext): Promise<number> {
      started(task);
      await sleep(20);
      if (data.fail) {
        run({ ...base(task), type: 'end', outcome: 'aborted', valid: !task.signal.aborted });
        throw new InvalidTaskError(`batch ${data.batch} has no records`);
      }
      while (data.gate !== undefined && !existsSync(data.gate)) await step(task);
      const at = eventTime();
      run({ ...base(task), at, type: 'end', outcome: 'done', valid: !task.signal.aborted && at < vouchedUntil(task) });
      return data.batch;
    }

    @GroupFinishedHandler('recon-record-set', { lease: leaseMs })
    batchesJoined(join: GroupJoinData, task: TaskContext): number {
      note({ kind: 'joined', id: task.task.id, epoch: task.epoch, detail: { group: join.group, results: Object.keys(join.results).length, errors: join.errors, failedFast: join.failedFast } });
      return Object.keys(join.results).length;
    }

    @GroupFinishedHandler('recon-parent', { lease: leaseMs })
    parentJoined(join: GroupJoinData, task: TaskContext): void {
      note({ kind: 'joined', id: task.task.id, epoch: task.epoch, detail: { group: join.group, results: join.results, errors: join.errors } });
    }

    @InvalidTaskHandler()
    invalid(task: TaskRecord, error: string): void {
      note({ kind: 'invalid', id: task.id, detail: `invalid handler: ${error}` });
    }
  }

  @Injectable()
  class Ticks {
    @Cron('*/2 * * * * *')
    @OncePerTrigger('tick', { lease: leaseMs })
    async tick(task: TaskContext): Promise<void> {
      started(task);
      run({ ...base(task), type: 'end', outcome: 'done', valid: true });
    }
  }

  @Module({
    imports: [
      ...(process.env.TICKS ? [ScheduleModule.forRoot()] : []),
      GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
        membership: false,
        maxClockSkew: skewMs,
        shutdownTimeout: '2s',
        tasks: { scanInterval: Number(env('SCAN_MS')), concurrency: Number(env('CONCURRENCY')) },
      })),
    ],
    providers: [TaskNode, ...(process.env.TICKS ? [Ticks] : [])],
  })
  class TaskAppModule {}

  stopWhenOrphaned(nodeName);
  void bootFixture(TaskAppModule);
}

if (require.main === module) main();
