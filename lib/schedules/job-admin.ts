import { CRON_HORIZON_NOTE } from '../core/cron-calendar';
import type { Clock } from '../core/clock';
import { ELECTION_SEMAPHORE_PREFIX } from '../permits/definition.validator';
import type { Permit } from '../permits/permit';
import type { SemaphoreAdmin } from '../permits/semaphore-admin';
import type { KindGuardOptions } from '../permits/semaphore-kind';
import type { HistoryRecorder } from './history-recorder';
import type { HistoryStore } from './history-store';
import { emptyHistory, type JobHistory } from './job-history';
import { slotLedger } from './slot-ledger';
import { mergeHistory, readableHistory, skippedTicks } from './job-history.rules';
import { validateJobName } from './job-request.input';
import type { JobDescription, JobHistoryView, JobPauseResult } from './job-view';
import type { ScheduledJob } from './run/scheduled-job';
import type { ScheduleCatalog, ScheduleChangeResult } from './schedule-catalog';
import type { LiveScheduleRecord } from './schedule-record';
import { NotFoundError } from '../core/errors/not-found.error';
import { unknownJob } from './errors/job.errors';

/** Fire instants a description lists. */
const NEXT_RUNS = 10;

/** This node's jobs and their run history, as job admin reads them. */
export interface JobAdminJobs {
  readonly jobs: { get(name: string): ScheduledJob | undefined; all(): ScheduledJob[] };
  readonly store: HistoryStore;
  readonly recorder: Pick<HistoryRecorder, 'unwritten' | 'skippedHere'>;
  /** Connects the history store once. */
  connect(): Promise<void>;
  /** Whether this node has a job of this name in the run history (its `@LeaderOnly` methods included). */
  knows(job: string): boolean;
  /** The election of this node's `@LeaderOnly` method named `job` in the history, if it is one. */
  leaderElection(job: string): string | undefined;
  /** This node's jobs that run under `semaphore`, sorted. */
  jobsUnder(semaphore: string): string[];
}

/** The semaphores under the jobs, as this node's view has them. */
export interface JobAdminPermits {
  readonly admin: Pick<SemaphoreAdmin, 'list' | 'pause' | 'resume'>;
  viewedPermits(semaphore: string): Permit[];
}

/** The runtime schedules this node sees. */
export interface JobAdminSchedules {
  /** The catalog, once start-up read it. */
  ready(): Promise<ScheduleCatalog>;
  takesPart(id: string): boolean;
  records(): LiveScheduleRecord[];
  catchUp(): Promise<void>;
}

/** The module's settings job admin reads. */
export interface JobAdminSettings {
  /** Runs kept per job. */
  readonly keep: number;
  readonly clock: Clock;
  /** This process's instance id (its own skipped ticks). */
  readonly instance: string;
  readonly storeTimeoutMs: number;
}

/**
 * Scheduled jobs by their name, for people: a job's history with this node's unwritten runs, everything about it in
 * one answer, and pause and resume by its semaphore or its runtime schedule. The service documents each answer.
 */
export class JobAdmin {
  constructor(
    private readonly runtime: JobAdminJobs,
    private readonly permits: JobAdminPermits,
    private readonly schedules: JobAdminSchedules,
    private readonly settings: JobAdminSettings,
  ) {}

  /** The names of this node's jobs, sorted. */
  names(): string[] {
    return this.runtime.jobs.all().map((job) => job.name);
  }

  async history(job: string, options: { limit?: number } = {}): Promise<JobHistoryView> {
    validateJobName(job);
    await this.runtime.connect();
    const { store, recorder } = this.runtime;
    const { storeTimeoutMs, keep, clock, instance } = this.settings;
    const [stored, ticks] = await Promise.all([store.read(job, storeTimeoutMs), store.readTicks(storeTimeoutMs)]);
    if (!stored && !this.runtime.knows(job) && recorder.unwritten(job).length === 0) {
      throw unknownJob(job, this.names());
    }
    // This node's runs not written yet are shown as if they were: the reader on the node that ran them sees them now.
    const history: JobHistory = mergeHistory(stored?.history ?? emptyHistory(job), { runs: recorder.unwritten(job) }, keep, clock.now());
    const shown = readableHistory(history);
    const skipped = skippedTicks(job, [...ticks.filter((t) => t.instance !== instance), { instance, node: '', since: 0, updatedAt: 0, skipped: recorder.skippedHere() }]);
    return {
      job,
      runs: options.limit === undefined ? shown.runs : shown.runs.slice(0, Math.max(0, options.limit)),
      lastFailure: shown.lastFailure,
      counts: shown.counts,
      missed: shown.missed,
      slots: slotLedger(shown, options.limit),
      ...(shown.failingSince !== undefined && { failingSince: shown.failingSince }),
      skipped,
    };
  }

  async describe(job: string): Promise<JobDescription> {
    validateJobName(job);
    const registered = this.runtime.jobs.get(job);
    const election = registered ? undefined : this.runtime.leaderElection(job);
    if (!registered && election === undefined) throw unknownJob(job, this.names());
    // A @LeaderOnly method runs under its election's permit, which the leader holds: no cron, nothing to run now.
    const { semaphore, mode } = registered?.options ?? { semaphore: `${ELECTION_SEMAPHORE_PREFIX}${election}`, mode: 'hold' as const };
    const history = await this.history(job);
    const definition = this.permits.admin.list().find((d) => d.name === semaphore);
    const holders = this.permits.viewedPermits(semaphore).map((p) => ({ node: p.acquirer, group: p.group, instance: p.instance, token: p.fencingToken, expiresAt: p.expiresAt }));
    const trigger = registered?.trigger;
    // Paused by its semaphore (permits 0), or a runtime schedule by its own pause (the registry keeps it current).
    const paused = definition?.permits === 0 || registered?.paused === true;
    // A paused job fires nowhere: no next runs to show until it is resumed.
    const nextRuns = trigger && !paused ? trigger.next(this.settings.clock.now(), NEXT_RUNS) : [];
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

  /** Pauses (`pause: true`) or resumes a job by its name: its semaphore, or its runtime schedule alone. */
  async setPaused(job: string, pause: boolean, options: KindGuardOptions): Promise<JobPauseResult> {
    validateJobName(job);
    const catalog = await this.schedules.ready();
    const target = await this.pauseTarget(job, catalog);
    if ('schedule' in target) {
      let changed: ScheduleChangeResult;
      try {
        changed = pause ? await catalog.pause(job) : await catalog.resume(job);
      } catch (error) {
        // Removed since it was looked up: no such job any more.
        if (error instanceof NotFoundError && error.kind === 'schedule') throw unknownJob(job, this.names());
        throw error;
      }
      await this.schedules.catchUp();
      return { job, paused: pause, by: 'schedule', semaphore: target.schedule.definition.semaphore, revision: changed.revision, alsoAffected: [] };
    }
    const { semaphore } = target;
    const definition = pause ? await this.permits.admin.pause(semaphore, options) : await this.permits.admin.resume(semaphore, undefined, options);
    // Every job under the semaphore stops or starts with it: this node's, and the cluster's runtime schedules on it that
    // are not paused themselves (those this node takes part in are in both: the view says whether they are paused).
    const ownJobs = this.runtime.jobsUnder(semaphore).filter((name) => !this.schedules.takesPart(name));
    const scheduled = this.schedules.records().filter((r) => r.definition.semaphore === semaphore && !r.definition.paused).map((r) => r.id);
    const alsoAffected = [...new Set([...ownJobs, ...scheduled])].filter((name) => name !== job).sort();
    return { job, paused: definition.permits === 0, by: 'semaphore', semaphore, permits: definition.permits, alsoAffected };
  }

  /** What pausing `job` pauses: its semaphore (a `@ClusterSingleton` or `@LeaderOnly` method), or its runtime schedule. */
  private async pauseTarget(job: string, catalog: ScheduleCatalog): Promise<{ semaphore: string } | { schedule: LiveScheduleRecord }> {
    const registered = this.runtime.jobs.get(job);
    if (registered && !this.schedules.takesPart(job)) return { semaphore: registered.options.semaphore };
    const election = registered ? undefined : this.runtime.leaderElection(job);
    if (election !== undefined) return { semaphore: `${ELECTION_SEMAPHORE_PREFIX}${election}` };
    // A runtime schedule, whether or not this node has its handler.
    const schedule = await catalog.get(job);
    if (schedule) return { schedule };
    throw unknownJob(job, this.names());
  }
}
