import { CRON_HORIZON_NOTE } from '../schedule-metadata/cron-instants';
import { Inject, Injectable } from '@nestjs/common';
import { emptyHistory, type JobHistory } from '../../schedules/job-history';
import { mergeHistory, readableHistory, skippedTicks } from '../../schedules/job-history.rules';
import { UnknownJobError } from '../../schedules/errors/unknown-job.error';
import type { JobDescription, JobHistoryView, RunNowResult } from '../../schedules/job-view';
import { parseDuration } from '../../core/duration';
import type { DurationInput } from '../../permits/semaphore-definition';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { SchedulesRuntime } from './schedules.runtime';
import { RuntimeSchedules } from './runtime-schedules';
import type { ScheduleChangeResult, ScheduleEditOptions } from '../../schedules/schedule-catalog';
import type { ScheduleDefinitionInput } from '../../schedules/schedule-definition';
import type { LiveScheduleRecord } from '../../schedules/schedule-record';
import { runContext, type CurrentRun } from './run-context';
import { ELECTION_SEMAPHORE_PREFIX } from '../../permits/definition.validator';

/** Fire instants a description lists. */
const NEXT_RUNS = 10;

/**
 * Scheduled jobs as people see them: each `@ClusterSingleton` job's run history (kept in the cluster, the newest
 * `schedules.history.keep` runs), and one answer that says everything about a job. Jobs are named `Class.method`.
 *
 * @example
 * ```ts
 * const { runs, skipped } = await schedules.history('BillingJobs.charge');
 * const { holders, nextRuns, lastFailure } = await schedules.describe('BillingJobs.charge');
 * ```
 */
@Injectable()
export class ScheduleService {
  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    private readonly runtime: SchedulesRuntime,
    private readonly permits: PermitsRuntime,
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    private readonly runtimeSchedules: RuntimeSchedules,
  ) {}

  /**
   * Registers a schedule defined at runtime, or changes it: stored in the cluster by compare-and-set on its id, so
   * replicas that deploy the same definitions at once never drop or duplicate one (an equal definition writes
   * nothing: `outcome: 'unchanged'`). Every node whose code has the `@ScheduleHandler` it names takes part, from
   * its next tick (within a second when events are lost). Its job name (history, describe, run now) is its id.
   * Throws `InvalidScheduleError` naming the field, or `ScheduleEditConflictError` when `expectedRevision` is stale.
   */
  async upsert(input: ScheduleDefinitionInput, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    await this.runtimeSchedules.ready();
    return this.runtimeSchedules.catalog.upsert(input, options);
  }

  /** Pauses a runtime schedule: it fires nowhere until resumed; its definition and history are kept. */
  async pause(id: string, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    await this.runtimeSchedules.ready();
    return this.runtimeSchedules.catalog.pause(id, options);
  }

  /** Resumes a paused runtime schedule. */
  async resume(id: string, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    await this.runtimeSchedules.ready();
    return this.runtimeSchedules.catalog.resume(id, options);
  }

  /** Removes a runtime schedule (its revision lives on, so re-creating it never goes back). */
  async remove(id: string, options?: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    await this.runtimeSchedules.ready();
    return this.runtimeSchedules.catalog.remove(id, options);
  }

  /** A runtime schedule as stored, or `undefined`. */
  async schedule(id: string): Promise<LiveScheduleRecord | undefined> {
    await this.runtimeSchedules.ready();
    return this.runtimeSchedules.catalog.get(id);
  }

  /** Every runtime schedule, sorted by id. */
  async schedules(): Promise<LiveScheduleRecord[]> {
    await this.runtimeSchedules.ready();
    return this.runtimeSchedules.catalog.list();
  }

  /**
   * Inside a `@ClusterSingleton` run: which job, what started it, the scheduled instant it is for and its token;
   * `undefined` elsewhere.
   */
  currentRun(): CurrentRun | undefined {
    return runContext.getStore();
  }

  /** The names of the jobs this node runs (`Class.method`, and the ids of the runtime schedules it has a handler for), sorted. */
  jobs(): string[] {
    return this.runtime.jobs.all().map((job) => job.name);
  }

  /**
   * A job's runs, newest first (`limit` of them, default all that are kept), with its last failure, its totals,
   * its missed instants and the ticks skipped by every live node. A `@LeaderOnly` method's runs are read as
   * `leader:<election>:<Class.method>`. Throws {@link UnknownJobError} for a name that is neither a job here nor in
   * the cluster's history.
   */
  async history(job: string, options: { limit?: number } = {}): Promise<JobHistoryView> {
    await this.runtime.connect();
    const { store, recorder } = this.runtime;
    const [stored, ticks] = await Promise.all([store.read(job, this.options.storeTimeoutMs), store.readTicks(this.options.storeTimeoutMs)]);
    if (!stored && !this.runtime.knows(job) && recorder.unwritten(job).length === 0) {
      throw new UnknownJobError(job, this.jobs());
    }
    // This node's runs not written yet are shown as if they were: the reader on the node that ran them sees them now.
    const history: JobHistory = mergeHistory(stored?.history ?? emptyHistory(job), { runs: recorder.unwritten(job) }, this.options.schedules.keep, this.options.clock.now());
    const shown = readableHistory(history);
    const here = this.options.holder.instance;
    const skipped = skippedTicks(job, [...ticks.filter((t) => t.instance !== here), { instance: here, node: '', since: 0, updatedAt: 0, skipped: recorder.skippedHere() }]);
    return {
      job,
      runs: options.limit === undefined ? shown.runs : shown.runs.slice(0, Math.max(0, options.limit)),
      lastFailure: shown.lastFailure,
      counts: shown.counts,
      missed: shown.missed,
      skipped,
    };
  }

  /**
   * Everything about a job in one answer: its semaphore and definition, who holds it with which token until when,
   * its cron expression and zone, the next 10 fire instants, the last run and the last failure, missed and skipped
   * counts. A `@LeaderOnly` method is described by its election's semaphore, its leader as holder and no schedule.
   * Throws {@link UnknownJobError} for a job this node does not have.
   */
  async describe(job: string): Promise<JobDescription> {
    const registered = this.runtime.jobs.get(job);
    const election = registered ? undefined : this.runtime.leaderElection(job);
    if (!registered && election === undefined) throw new UnknownJobError(job, this.jobs());
    // A @LeaderOnly method runs under its election's permit, which the leader holds: no cron, nothing to run now.
    const { semaphore, mode } = registered?.options ?? { semaphore: `${ELECTION_SEMAPHORE_PREFIX}${election}`, mode: 'hold' as const };
    const history = await this.history(job);
    const definition = this.permits.admin.list().find((d) => d.name === semaphore);
    const holders = this.permits.viewedPermits(semaphore).map((p) => ({ node: p.acquirer, group: p.group, instance: p.instance, token: p.fencingToken, expiresAt: p.expiresAt }));
    const trigger = registered?.trigger;
    const paused = definition?.permits === 0;
    // A paused job fires nowhere: no next runs to show until it is resumed.
    const nextRuns = trigger && !paused ? trigger.next(this.options.clock.now(), NEXT_RUNS) : [];
    return {
      ...history,
      semaphore,
      mode,
      definition: definition && { permits: definition.permits, durationMs: definition.durationMs, groupPattern: definition.groupPattern, acquirerPattern: definition.acquirerPattern },
      paused,
      holders,
      cron: trigger?.expression,
      timeZone: trigger?.timeZone,
      nextRuns,
      ...(trigger && !paused && nextRuns.length < NEXT_RUNS && { nextRunsNote: CRON_HORIZON_NOTE }),
      lastRun: history.runs[0],
    };
  }

  /**
   * Runs a job once, now, in the cluster: on the node that holds its permit (else on one its definition admits),
   * under a permit like any tick, marked `manual` in the history. Resolves once the run started. Throws
   * {@link RunNowRefusedError} when the job is unknown or paused, no live node may run it, it is inside the last
   * run's `lockAtLeastFor` or a recovery wait, or none started it within `timeout` (default `'30s'`; the request is
   * then withdrawn and never runs). With `wait`, resolves once the run ended too (at most that long after it
   * started), with its `outcome`: without one when the run was still going when the wait ran out.
   */
  async runNow(job: string, options: { timeout?: DurationInput; wait?: DurationInput } = {}): Promise<RunNowResult> {
    const waitMs = options.wait === undefined ? undefined : parseDuration(options.wait, job, 'wait');
    return this.runtime.requests.request(job, parseDuration(options.timeout ?? '30s', job, 'timeout'), waitMs);
  }
}
