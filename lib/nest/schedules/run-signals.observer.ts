import type { PermitDenied } from '../../permits/acquire-result';
import type { RunPipelineObserver } from '../../schedules/run/run-observers';
import type { ObservedRun, ObservedRunEnd, ObservedSkip } from '../../schedules/run/run-observer';
import type { ScheduledJob } from '../../schedules/run/scheduled-job';
import type { GatekeeperEvents } from '../signals/gatekeeper-events';
import type { GatekeeperTracing } from '../signals/gatekeeper-tracing';

/**
 * The module's signals in the run seam: every permit decision, run, skip and missed instant as a lifecycle event,
 * and each run in a `gatekeeper.job` span, the parent of what the job calls.
 */
export class RunSignalsObserver implements RunPipelineObserver {
  constructor(private readonly events: GatekeeperEvents, private readonly tracing: GatekeeperTracing) {}

  around<T>(run: ObservedRun, work: () => Promise<T>): Promise<T> {
    const attributes = { 'gatekeeper.semaphore': run.semaphore, 'gatekeeper.job': run.job, 'gatekeeper.token': run.token };
    return this.tracing.span('gatekeeper.job', attributes, async (span) => {
      const result = await work();
      span.set({ 'gatekeeper.outcome': 'finished' });
      return result;
    });
  }

  permitHeld(job: ScheduledJob, token: number, fresh: boolean): void {
    this.events.emit({ name: fresh ? 'gatekeeper.permit.granted' : 'gatekeeper.permit.refreshed', semaphore: job.options.semaphore, job: job.name, token });
  }

  permitDenied(job: ScheduledJob, denied: PermitDenied, lost: boolean): void {
    // The code (NO_PERMIT_AVAILABLE, ...), as the events document it.
    const { reason } = denied;
    if (lost) this.events.emit({ name: 'gatekeeper.permit.lost', semaphore: job.options.semaphore, job: job.name, reason });
    this.events.emit({ name: 'gatekeeper.permit.denied', semaphore: job.options.semaphore, job: job.name, reason });
  }

  started(run: ObservedRun): void {
    this.events.emit({ name: 'gatekeeper.job.started', semaphore: run.semaphore, job: run.job, token: run.token, trigger: run.trigger, instant: run.instant });
  }

  ended(run: ObservedRun, end: ObservedRunEnd): void {
    const { semaphore, job, token } = run;
    if (end.outcome === 'completed') {
      this.events.emit({ name: 'gatekeeper.job.finished', semaphore, job, token, durationMs: end.durationMs });
      return;
    }
    const error = end.error instanceof Error ? end.error.message : String(end.error);
    this.events.emit({ name: 'gatekeeper.job.failed', semaphore, job, token, durationMs: end.durationMs, error, outcome: end.outcome });
  }

  skipped(skip: ObservedSkip): void {
    this.events.emit({ name: 'gatekeeper.job.skipped', semaphore: skip.semaphore, job: skip.job, reason: skip.reason });
  }

  missed(job: ScheduledJob, count: number, last: number): void {
    this.events.emit({ name: 'gatekeeper.job.missed', semaphore: job.options.semaphore, job: job.name, count, last });
  }
}
