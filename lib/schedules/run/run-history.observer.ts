import type { HistoryRecorder } from '../history-recorder';
import type { RunRecord } from '../run-record';
import type { RunPipelineObserver } from './run-observers';
import type { ObservedRun, ObservedRunEnd, ObservedSkip } from './run-observer';
import type { ScheduledJob } from './scheduled-job';

/** The run history's part of the run seam: each run's record, skipped ticks counted, missed instants noted. */
export class RunHistoryObserver implements RunPipelineObserver {
  /** The record of each run going on here, by its observed run. */
  private readonly records = new WeakMap<ObservedRun, RunRecord>();

  constructor(private readonly recorder: Pick<HistoryRecorder, 'started' | 'finished' | 'skippedTick' | 'missed'>) {}

  started(run: ObservedRun): void {
    this.records.set(run, this.recorder.started({ job: run.job, trigger: run.trigger, instant: run.instant, token: run.token, request: run.request }));
  }

  ended(run: ObservedRun, end: ObservedRunEnd): void {
    const record = this.records.get(run);
    if (!record) return;
    this.records.delete(run);
    this.recorder.finished(record, end.outcome, end.durationMs, end.error);
  }

  skipped(skip: ObservedSkip): void {
    this.recorder.skippedTick(skip.job, skip.reason);
  }

  missed(job: ScheduledJob, count: number, last: number): void {
    this.recorder.missed(job.name, count, last);
  }
}
