import { Inject, Injectable } from '@nestjs/common';
import { parseDuration } from '../../core/duration';
import type { SqlTransaction } from '../../store/sql-transaction';
import type { RunNowRequested } from '../../schedules/run/run-now-requests';
import type { KindGuardOptions } from '../../permits/semaphore-kind';
import type { DurationInput } from '../../permits/semaphore-definition';
import { JobAdmin } from '../../schedules/job-admin';
import { DEFAULT_RUN_NOW_TIMEOUT_MS, validateJobName } from '../../schedules/job-request.input';
import type { JobDescription, JobHistoryView, JobPauseResult, RunNowResult } from '../../schedules/job-view';
import { runContext, type CurrentRun } from '../../schedules/run/run-context';
import type { RunObserver } from '../../schedules/run/run-observer';
import type { ScheduleChangeResult, ScheduleEditOptions } from '../../schedules/schedule-catalog';
import type { ScheduleDefinitionInput } from '../../schedules/schedule-definition';
import type { LiveScheduleRecord } from '../../schedules/schedule-record';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { completeRunIn, type CompleteRunInOptions, type RunInTransactionParts } from './run-in-transaction';
import { RuntimeSchedules } from './runtime-schedules';
import { SchedulesRuntime } from './schedules.runtime';

/**
 * Scheduled jobs as people see them: each `@ClusterSingleton` job's run history (kept in the cluster, the newest
 * `schedules.history.keep` runs), one answer that says everything about a job, run now, and pause and resume by the
 * job's name. Jobs are named `Class.method`.
 *
 * @example
 * ```ts
 * const { runs, skipped } = await schedules.history('BillingJobs.charge');
 * const { holders, nextRuns, lastFailure } = await schedules.describe('BillingJobs.charge');
 * const { alsoAffected } = await schedules.pauseJob('BillingJobs.charge'); // until resumeJob
 * ```
 */
@Injectable()
export class ScheduleService {
  private readonly admin: JobAdmin;
  private readonly inTransaction: RunInTransactionParts;

  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    private readonly runtime: SchedulesRuntime,
    permits: PermitsRuntime,
    @Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions,
    private readonly runtimeSchedules: RuntimeSchedules,
  ) {
    const { clock, storeTimeoutMs, schedules: { keep }, holder: { instance } } = options;
    this.admin = new JobAdmin(runtime, permits, runtimeSchedules, { keep, clock, instance, storeTimeoutMs });
    // The permits are in the history's database when one 'postgres' backend holds both.
    const { backends, postgres } = options;
    const permitsAt = backends.permits === 'postgres' && backends.history === 'postgres'
      ? { ...(postgres.schema !== undefined && { schema: postgres.schema }), ...(postgres.mapPrefix !== undefined && { mapPrefix: postgres.mapPrefix }) }
      : undefined;
    this.inTransaction = { recorder: runtime.recorder, history: runtime.store, ...(permitsAt && { permitsAt }) };
  }

  /**
   * Registers a schedule defined at runtime, or changes it: stored in the cluster by compare-and-set on its id, so
   * replicas that deploy the same definitions at once never drop or duplicate one (an equal definition writes
   * nothing: `outcome: 'unchanged'`). Every node whose code has the `@ScheduleHandler` it names takes part, from
   * its next tick (within a second when events are lost). Its job name (history, describe, run now) is its id.
   * Throws `InvalidInputError` naming the field, or `EditConflictError` when `expectedRevision` is stale.
   *
   * With `options.transaction` (PostgreSQL backend), the change is written inside your own database transaction,
   * through an executor of `nestjs-gatekeeper/fencing` on the database the backend uses: it commits with your rows
   * (a tenant and its schedule) or not at all; `pause`, `resume` and `remove` take it too.
   */
  async upsert(input: ScheduleDefinitionInput, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    return (await this.runtimeSchedules.ready()).upsert(input, options);
  }

  /** Pauses a runtime schedule: it fires nowhere until resumed; its definition and history are kept. */
  async pause(id: string, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    return (await this.runtimeSchedules.ready()).pause(id, options);
  }

  /** Resumes a paused runtime schedule. */
  async resume(id: string, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    return (await this.runtimeSchedules.ready()).resume(id, options);
  }

  /** Removes a runtime schedule (its revision lives on, so re-creating it never goes back). */
  async remove(id: string, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    return (await this.runtimeSchedules.ready()).remove(id, options);
  }

  /** A runtime schedule as stored, or `undefined`. */
  async schedule(id: string): Promise<LiveScheduleRecord | undefined> {
    return (await this.runtimeSchedules.ready()).get(id);
  }

  /** Every runtime schedule, sorted by id. */
  async schedules(): Promise<LiveScheduleRecord[]> {
    return (await this.runtimeSchedules.ready()).list();
  }

  /**
   * Inside a `@ClusterSingleton` run: which job, what started it, the scheduled instant it is for and its token;
   * `undefined` elsewhere.
   */
  currentRun(): CurrentRun | undefined {
    return runContext.getStore();
  }

  /**
   * Inside a `@ClusterSingleton` run, in the transaction that makes the run's writes: records the run as `completed`
   * in the job's history in that transaction, fenced by the run's permit, so the record and the writes commit together
   * or not at all. The run history must be on PostgreSQL (`backends: { history: 'postgres' }`), the transaction on its
   * database, and the fence table there (`npx nestjs-gatekeeper fencing sql`).
   *
   * The fence (`fence()` on `options.resource`, default the job's semaphore) refuses a holder whose permit was taken
   * over, and the writes of successive holders commit in token order. When the permits are in the same database (the
   * module's `'postgres'` backend holds permits and history), the permit is checked on the database's clock now and
   * again at `COMMIT`: a run frozen anywhere before its `COMMIT` past its lease commits nothing (`COMMIT` fails with
   * SQLSTATE `GK001`).
   *
   * What the history then says: `completed` exactly when the transaction committed, even if the node dies right after
   * its `COMMIT`. A run that returns although the transaction rolled back is written `failed`, saying so. Call it once,
   * in the run's last transaction: what the run does after that transaction commits is not recorded. Throws
   * `InvalidInputError` outside a run or with the history elsewhere, before any statement; a refusal
   * (`StaleFencingTokenError`, `LeaseLostError`, `FenceWaitTimeoutError`) leaves the transaction unable to commit.
   *
   * @example With TypeORM:
   * ```ts
   * @Cron('0 * * * *')
   * @ClusterSingleton('billing')
   * async bill() {
   *   await this.dataSource.transaction(async (manager) => {
   *     await manager.update(Invoice, { status: 'due' }, { status: 'charged' });
   *     await this.schedules.completeRunIn(typeormExecutor(manager));
   *   });
   * }
   * ```
   */
  completeRunIn(transaction: SqlTransaction, options?: CompleteRunInOptions): Promise<void> {
    return completeRunIn(this.inTransaction, transaction, options);
  }

  /**
   * Adds an observer of every run of this node's jobs (ticks, runs now, catch-ups): it is told when a run starts and
   * ends (with its outcome) and when a tick is skipped, after the library's own observers, in the order added. An
   * observer that throws is logged and never breaks the run. Returns what removes it. Add it at start-up (in
   * `onModuleInit`) to hear start-up's catch-ups too.
   *
   * @example
   * ```ts
   * const stop = schedules.observeRuns({ ended: (run, end) => this.metrics.record(run.job, end.outcome, end.durationMs) });
   * ```
   */
  observeRuns(observer: RunObserver): () => void {
    return this.runtime.pipeline.observe(observer);
  }

  /** The names of the jobs this node runs (`Class.method`, and the ids of the runtime schedules it has a handler for), sorted. */
  jobs(): string[] {
    return this.admin.names();
  }

  /**
   * A job's runs, newest first (`limit` of them, default all that are kept), with its last failure, its totals,
   * its missed instants and the ticks skipped by every live node. A `@LeaderOnly` method's runs are read as
   * `leader:<election>:<Class.method>`. Throws {@link NotFoundError} for a name that is neither a job here nor in
   * the cluster's history, and `InvalidInputError` (on `job`, before any store call) for one no job can have: a
   * control character, a lone surrogate, more than 500 characters (the name rule, docs/configuration.md).
   */
  history(job: string, options: { limit?: number } = {}): Promise<JobHistoryView> {
    return this.admin.history(job, options);
  }

  /**
   * Everything about a job in one answer: its semaphore and definition, who holds it with which token until when,
   * its cron expression and zone, the next 10 fire instants, the last run and the last failure, missed and skipped
   * counts. A `@LeaderOnly` method is described by its election's semaphore, its leader as holder and no schedule.
   * Throws {@link NotFoundError} for a job this node does not have.
   */
  describe(job: string): Promise<JobDescription> {
    return this.admin.describe(job);
  }

  /**
   * Pauses a job by its name, as `jobs()`, `describe` and the history name it: no node runs it until
   * {@link ScheduleService.resumeJob}. A `@ClusterSingleton` job is paused by its semaphore (permits to 0, the count
   * remembered for the resume, as `SemaphoreAdminService.pause` does): every job that shares the semaphore stops too, and
   * the answer names those this node knows in `alsoAffected`. A runtime schedule is paused alone, as
   * {@link ScheduleService.pause} does. A `@LeaderOnly` method's semaphore is its election's: pausing it needs
   * `{ force: true }` (the leader steps down), else it is refused with `InvalidInputError`. Throws
   * {@link NotFoundError} for a job this node does not have and no runtime schedule has as its id. Pausing a paused
   * job changes nothing.
   *
   * @example
   * ```ts
   * const { semaphore, alsoAffected } = await schedules.pauseJob('BillingJobs.charge');
   * ```
   */
  pauseJob(job: string, options: KindGuardOptions = {}): Promise<JobPauseResult> {
    return this.admin.setPaused(job, true, options);
  }

  /**
   * Resumes a job {@link ScheduleService.pauseJob} paused: a `@ClusterSingleton` job's semaphore gets back the permits
   * it had before the pause (1 if the pause remembered none), which resumes every job that shares it
   * (`alsoAffected`); a runtime schedule resumes alone. The same `force`, and the same errors, as
   * {@link ScheduleService.pauseJob}. Resuming a job that is not paused changes nothing.
   */
  resumeJob(job: string, options: KindGuardOptions = {}): Promise<JobPauseResult> {
    return this.admin.setPaused(job, false, options);
  }

  /**
   * Runs a job once, now, in the cluster: on the node that holds its permit (else on one its definition admits),
   * under a permit like any tick, marked `manual` in the history. Resolves once the run started. Throws
   * {@link RunNowRefusedError} when the job is unknown or paused, no live node may run it, it is inside the last
   * run's `lockAtLeastFor` or a recovery wait, or none started it within `timeout` (default `'30s'`; the request is
   * then withdrawn and never runs). With `wait`, resolves once the run ended too (at most that long after it
   * started), with its `outcome`: without one when the run was still going when the wait ran out.
   */
  runNow(job: string, options?: { timeout?: DurationInput; wait?: DurationInput }): Promise<RunNowResult>;
  /**
   * Requests a run of a job once, now, inside your own database transaction (PostgreSQL backend, through an executor
   * of `nestjs-gatekeeper/fencing` on the database it uses): the request exists once your transaction commits, and the
   * node that holds the job's permit starts it then, if it can within `timeout` of the request (default `'30s'`). It
   * resolves with the request's id at once: nobody waits for the run (its history names the request). Refused as
   * `runNow` refuses, before anything is written.
   */
  runNow(job: string, options: { transaction: SqlTransaction; timeout?: DurationInput }): Promise<RunNowRequested>;
  async runNow(job: string, options: { timeout?: DurationInput; wait?: DurationInput; transaction?: SqlTransaction } = {}): Promise<RunNowResult | RunNowRequested> {
    validateJobName(job);
    const timeoutMs = parseDuration(options.timeout ?? DEFAULT_RUN_NOW_TIMEOUT_MS, job, 'timeout');
    if (options.transaction !== undefined) return this.runtime.pipeline.requests.requestIn(options.transaction, job, timeoutMs);
    const waitMs = options.wait === undefined ? undefined : parseDuration(options.wait, job, 'wait');
    return this.runtime.pipeline.requests.request(job, timeoutMs, waitMs);
  }
}
