import type { PermitExecutor } from '../../permits/permit-executor';
import { UnheldSemaphoreMonitor, type UnheldSemaphoreView } from '../../permits/unheld-semaphore.monitor';
import type { RunRequestStore } from '../run-request.store';
import { CheckIns } from './check-ins';
import { JobRunner } from './job-runner';
import type { JobKnownSince } from './missed-runs';
import type { RunLog } from './run-log';
import { RunLogObserver } from './run-log.observer';
import { RunNowRequests, type RunNowView } from './run-now-requests';
import type { RunObserver } from './run-observer';
import { RunObservers, type RunPipelineObserver } from './run-observers';

/** What the pipeline is wired from. */
export interface RunPipelineParts {
  /** The run history (the `HistoryRecorder`): since when a job is known, and its place in the run seam. */
  readonly recorder: JobKnownSince & { readonly observer: RunPipelineObserver };
  readonly requestStore: RunRequestStore;
  /** Runs a job's body under its semaphore's permit. */
  readonly permits: Pick<PermitExecutor, 'run'>;
  /** This node's view of its jobs, their semaphores and the live nodes, as the runner and run now read it. */
  readonly view: RunNowView;
  /** The same view as the monitor of semaphores that run nowhere reads it. */
  readonly unheld: UnheldSemaphoreView;
  /** The module's own observers (events, tracing): told after the history and run-now outcomes, before the log. */
  readonly signals: readonly RunPipelineObserver[];
  /** The deadline of one store call. */
  readonly storeTimeoutMs: number;
  readonly log: RunLog;
}

/**
 * The run pipeline: one {@link JobRunner} every tick, run now and catch-up goes through, its ordered observers
 * (history, run-now outcome, the module's signals, check-ins, log, then the users'), and run-now requests that reach the
 * runner directly.
 */
export class RunPipeline {
  readonly runner: JobRunner;
  readonly requests: RunNowRequests;
  private readonly observers: RunObservers;
  private readonly jobs: RunNowView['jobs'];

  constructor({ recorder, requestStore, permits, view, unheld, signals, storeTimeoutMs, log }: RunPipelineParts) {
    const own: RunPipelineObserver[] = [];
    this.observers = new RunObservers(own, log);
    this.jobs = view.jobs;
    const monitor = new UnheldSemaphoreMonitor(unheld, log, () => view.permitClock.now());
    this.runner = new JobRunner({
      permits, observers: this.observers, history: recorder, clock: view.clock, permitClock: view.permitClock, log, job: (name) => view.jobs.get(name),
      runsNowhere: (semaphore) => monitor.runsNowhere(semaphore),
    });
    this.requests = new RunNowRequests({ store: requestStore, runner: this.runner, storeTimeoutMs, log, view });
    const checkIns = new CheckIns((name) => view.jobs.get(name)?.options.checkIn, log);
    own.push(recorder.observer, this.requests.outcomes, ...signals, checkIns, new RunLogObserver(log, monitor, (semaphore) => unheld.definition(semaphore)));
  }

  /** Tells the observers (events, check-ins) the instants of `job` the slot ledger judged missed with this node's write. */
  missed(job: string, instants: readonly number[]): void {
    const scheduled = this.jobs.get(job);
    if (scheduled) for (const instant of instants) this.observers.tell('missed', scheduled, instant);
  }

  /** Adds a user's run observer, after every one before it; returns what removes it. */
  observe(observer: RunObserver): () => void {
    return this.observers.add(observer);
  }
}
