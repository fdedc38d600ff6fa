import type { Logger } from '@nestjs/common';
import type { HistoryRecorder } from '../../schedules/history-recorder';
import type { RunRequestStore } from '../../schedules/run-request.store';
import { JobRunner } from '../../schedules/run/job-runner';
import { RunNowRequests } from '../../schedules/run/run-now-requests';
import type { RunObserver } from '../../schedules/run/run-observer';
import { RunObservers, type RunPipelineObserver } from '../../schedules/run/run-observers';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import type { ExclusiveRuns } from '../permits/exclusive-runs';
import type { PermitsRuntime } from '../permits/permits.runtime';
import type { SemaphoreAdminService } from '../permits/semaphore-admin.service';
import { UnheldSemaphoreMonitor } from '../../permits/unheld-semaphore.monitor';
import type { PresenceRuntime } from '../presence/presence.runtime';
import type { GatekeeperEvents } from '../signals/gatekeeper-events';
import type { GatekeeperTracing } from '../signals/gatekeeper-tracing';
import type { JobRegistry } from './job-registry';
import { RunEventsObserver } from './run-events.observer';
import { RunLogObserver } from '../../schedules/run/run-log.observer';
import { RunTracingObserver } from './run-tracing.observer';

/** What the pipeline is wired from: the module's options and the providers it reads. */
export interface RunPipelineParts {
  readonly options: ResolvedGatekeeperOptions;
  readonly recorder: HistoryRecorder;
  readonly jobs: JobRegistry;
  readonly permits: PermitsRuntime;
  readonly requestStore: RunRequestStore;
  readonly runs: ExclusiveRuns;
  readonly events: GatekeeperEvents;
  readonly tracing: GatekeeperTracing;
  readonly presence: PresenceRuntime;
  readonly semaphores: SemaphoreAdminService;
  readonly logger: Logger;
}

/**
 * The run pipeline of lib/schedules/run wired to the module: one {@link JobRunner}, its ordered observers (history,
 * run-now outcome, events, tracing, log, then the users'), and run-now requests that reach the runner directly.
 */
export class RunPipeline {
  readonly runner: JobRunner;
  readonly requests: RunNowRequests;
  private readonly observers: RunObservers;

  constructor({ options, recorder, jobs, permits, requestStore, runs, events, tracing, presence, semaphores, logger }: RunPipelineParts) {
    const own: RunPipelineObserver[] = [];
    this.observers = new RunObservers(own, logger);
    this.runner = new JobRunner({
      permits: runs, observers: this.observers, history: recorder, clock: options.clock, permitClock: options.permitClock, log: logger,
      job: (name) => jobs.get(name),
    });
    this.requests = new RunNowRequests({
      store: requestStore,
      runner: this.runner,
      storeTimeoutMs: options.storeTimeoutMs,
      log: logger,
      view: {
        job: (name) => jobs.get(name),
        jobNames: () => jobs.all().map((job) => job.name),
        definition: (semaphore) => permits.admin.list().find((d) => d.name === semaphore),
        livePermits: (semaphore) => permits.viewedPermits(semaphore),
        graceUntil: (semaphore) => permits.viewedGraceUntil(semaphore),
        liveInstances: () => presence.confirmedParticipants(),
        holder: options.holder,
        clock: options.clock,
        permitClock: options.permitClock,
        clockSkewMs: options.clockSkewMs,
      },
    });
    const unheld = new UnheldSemaphoreMonitor(
      {
        definition: (name) => semaphores.getDefinition(name),
        livePermits: (name) => permits.viewedPermits(name),
        lastToken: (name) => permits.viewedLastToken(name),
        liveInstances: () => presence.confirmedParticipants(),
      },
      logger,
      () => options.permitClock.now(),
    );
    own.push(recorder.observer, this.requests.outcomes, new RunEventsObserver(events), new RunTracingObserver(tracing), new RunLogObserver(logger, unheld));
  }

  /** Adds a user's run observer, after every one before it; returns what removes it. */
  observe(observer: RunObserver): () => void {
    return this.observers.add(observer);
  }
}
