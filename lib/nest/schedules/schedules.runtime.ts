import { Inject, Injectable, Logger } from '@nestjs/common';
import { HistoryRecorder } from '../../schedules/history-recorder';
import { leaderJobName } from '../../core/leader-job-name';
import { ELECTION_SEMAPHORE_PREFIX } from '../../permits/definition.validator';
import type { HistoryStore } from '../../schedules/history-store';
import type { CapabilityRuntime } from '../capability.runtime';
import { GatekeeperExplorer } from '../gatekeeper.explorer';
import { CLUSTER_SINGLETON_METADATA, GATEKEEPER_HISTORY_STORE, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_RUN_REQUEST_STORE, LEADER_ONLY_METADATA } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';
import { JobRegistry } from './job-registry';
import { PermitsRuntime } from '../permits/permits.runtime';
import { OutageNotice } from '../signals/outage-notice';
import type { RunRequestStore } from '../../schedules/run-request.store';
import { RunPipeline } from '../../schedules/run/run-pipeline';
import { scheduleOverviews, type ScheduleOverview } from '../../schedules/schedule-overview';
import type { LiveScheduleRecord } from '../../schedules/schedule-record';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import { GatekeeperEvents } from '../signals/gatekeeper-events';
import { GatekeeperTracing } from '../signals/gatekeeper-tracing';
import { PresenceRuntime } from '../presence/presence.runtime';
import { SemaphoreAdminService } from '../permits/semaphore-admin.service';

/**
 * Schedules in one process: the jobs found at start-up, the run pipeline every tick, run now and catch-up goes
 * through ({@link RunPipeline}), and this node's part of their run history (written in batches; see
 * {@link HistoryRecorder}). Started after permits; stopped before them, writing what is left.
 * Used inside the module, not by applications.
 */
@Injectable()
export class SchedulesRuntime implements CapabilityRuntime {
  readonly recorder: HistoryRecorder;
  /** The runner, its observers and run-now requests, wired. */
  readonly pipeline: RunPipeline;
  /** This node's `@LeaderOnly` methods by their history name (`leader:<election>:<Class.method>`), with their election; found at start-up. */
  private leaderJobs: ReadonlyMap<string, string> = new Map();
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private connected?: Promise<void>;
  private readonly outage = new OutageNotice(this.logger, 'Run history', 'runs are kept here and written at the first flush it answers');

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_HISTORY_STORE) readonly store: HistoryStore,
    private readonly explorer: GatekeeperExplorer,
    readonly jobs: JobRegistry,
    permits: PermitsRuntime,
    @Inject(GATEKEEPER_RUN_REQUEST_STORE) requestStore: RunRequestStore,
    events: GatekeeperEvents,
    tracing: GatekeeperTracing,
    presence: PresenceRuntime,
    semaphores: SemaphoreAdminService,
  ) {
    // An edit to a duration shorter than a held job's tick is refused unless forced: the permit would lapse between ticks.
    permits.tellHeldTicks((semaphore) => jobs.heldTick(semaphore));
    this.recorder = new HistoryRecorder(store, {
      keep: options.schedules.keep,
      flushIntervalMs: options.schedules.flushIntervalMs,
      callTimeoutMs: options.storeTimeoutMs,
      identity: { instance: options.holder.instance, node: options.holder.acquirer },
      clock: options.clock,
      onFlushFailed: (error) => this.flushFailed(error),
      onFlushed: () => this.outage.succeeded(),
      judge: (job) => {
        const found = jobs.get(job);
        return found && { health: found.options.health, calendar: found.trigger };
      },
      onSlots: (job, news) => {
        if (news.missed) {
          const { instants, count } = news.missed;
          const named = instants.map((at) => new Date(at).toISOString()).join(', ');
          this.logger.warn(`${job}: ${count} scheduled run(s) did not run on any node and nothing said why (missed): ${named}${count > instants.length ? ` and ${count - instants.length} more` : ''}`);
          this.pipeline.missed(job, instants);
        }
        if (news.noEligibleNode) {
          const semaphore = jobs.get(job)?.options.semaphore;
          this.logger.warn(`${job}: no live node may run it since ${new Date(news.noEligibleNode.since).toISOString()} (no live node is admitted by the patterns of its semaphore${semaphore === undefined ? '' : ` "${semaphore}"`}); its scheduled runs are skipped`);
          events.emit({ name: 'gatekeeper.job.unrunnable', job, ...(semaphore !== undefined && { semaphore }), since: news.noEligibleNode.since });
        }
      },
      onHealth: (change) => {
        if (change.kind === 'failing') {
          this.logger.warn(`${change.job} is failing: ${change.failures} run(s) in a row failed, on any node, since ${new Date(change.since).toISOString()}${change.lastError === undefined ? '' : ` (the last: ${change.lastError})`}`);
          events.emit({ name: 'gatekeeper.job.failing', job: change.job, failures: change.failures, since: change.since, ...(change.lastError !== undefined && { lastError: change.lastError }) });
        } else {
          this.logger.log(`${change.job} recovered: ${change.successes} run(s) in a row completed; it was failing since ${new Date(change.failingSince).toISOString()}`);
          events.emit({ name: 'gatekeeper.job.recovered', job: change.job, successes: change.successes, failingSince: change.failingSince });
        }
      },
      onLost: ({ lostSince, restored }) => this.logger.error(
        `Run history: the store lost data (since ${new Date(lostSince).toISOString()}). Written back from this node's memory: the history of ${restored.join(', ')}. ` +
        'The history of jobs no running node held is lost; put it on a durable store (backends: { history: \'postgres\' } or \'redis\' with persistence) to keep it through a full restart.',
      ),
    });
    this.pipeline = new RunPipeline({
      recorder: this.recorder,
      requestStore,
      permits: permits.executor,
      // The objects themselves, not closures over them: a run now reads them on its way.
      view: {
        jobs, semaphores: permits.view, presence: presence.view,
        holder: options.holder,
        clock: options.clock,
        permitClock: options.permitClock,
        clockSkewMs: options.clockSkewMs,
      },
      unheld: {
        definition: (name) => semaphores.getDefinition(name),
        livePermits: (name) => permits.viewedPermits(name),
        lastToken: (name) => permits.viewedLastToken(name),
        liveInstances: () => presence.confirmedParticipants(),
      },
      // The module's events and its tracing are themselves observers of every run.
      signals: [events, tracing],
      storeTimeoutMs: options.storeTimeoutMs,
      log: this.logger,
    });
  }

  async start(): Promise<void> {
    this.jobs.register(this.explorer.discover<ResolvedClusterSingletonOptions>(CLUSTER_SINGLETON_METADATA));
    this.leaderJobs = new Map(this.explorer.discover<string>(LEADER_ONLY_METADATA).map(({ metadata: election, where }) => [leaderJobName(election, where), election]));
    await this.connect();
    await this.pipeline.requests.connect();
    this.recorder.start();
  }

  async drain(): Promise<void> {}

  async stop(): Promise<void> {
    await this.pipeline.requests.close();
    if (!this.connected) return;
    await this.recorder.stop();
    await this.store.close();
    this.connected = undefined;
  }

  /** Whether this node has a job (cron, runtime schedule or `@LeaderOnly` method) of this name in the run history. */
  knows(job: string): boolean {
    return this.jobs.get(job) !== undefined || this.leaderJobs.has(job);
  }

  /** The election of this node's `@LeaderOnly` method named `job` in the history, if it is one. */
  leaderElection(job: string): string | undefined {
    return this.leaderJobs.get(job);
  }

  /**
   * This node's jobs that run under `semaphore`, sorted: its `@ClusterSingleton` jobs and the runtime schedules it
   * takes part in (by their options), and for an election's semaphore (`election:<name>`) its `@LeaderOnly` methods
   * of that election.
   */
  jobsUnder(semaphore: string): string[] {
    const jobs = this.jobs.all().filter((job) => job.options.semaphore === semaphore).map((job) => job.name);
    const leaders = [...this.leaderJobs].filter(([, election]) => `${ELECTION_SEMAPHORE_PREFIX}${election}` === semaphore).map(([job]) => job);
    return [...jobs, ...leaders].sort();
  }

  /** Overviews of runtime schedules as this node knows them, with `next` fire instants each (see `scheduleOverviews`). */
  async overviews(records: readonly LiveScheduleRecord[], next: number): Promise<ScheduleOverview[]> {
    await this.connect();
    return scheduleOverviews(records, {
      store: this.store,
      unwritten: (job) => this.recorder.unwritten(job),
      handledHere: (id) => this.jobs.get(id) !== undefined,
      calendar: (cron, timeZone) => CronTrigger.fromExpression(cron, timeZone),
      timeoutMs: this.options.storeTimeoutMs,
    }, this.options.clock.now(), next);
  }

  /** Connects the history store once (readers before start-up wait for it). */
  connect(): Promise<void> {
    this.connected ??= this.store.connect().catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  /** A write of the history failed: the store out of reach is said once per outage; anything else each time. */
  private flushFailed(error: unknown): void {
    if (OutageNotice.isOutage(error)) this.outage.failed((error as Error).message);
    else this.logger.warn(`Run history not written (kept here, tried again at the next flush): ${(error as Error).message}`);
  }
}
