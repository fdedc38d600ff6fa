import type { RunPipelineObserver } from '../../schedules/run/run-observers';
import type { ObservedRun } from '../../schedules/run/run-observer';
import type { GatekeeperTracing } from '../signals/gatekeeper-tracing';

/** Tracing's part of the run seam: each run in a `gatekeeper.job` span, the parent of what the job calls. */
export class RunTracingObserver implements RunPipelineObserver {
  constructor(private readonly tracing: GatekeeperTracing) {}

  around<T>(run: ObservedRun, work: () => Promise<T>): Promise<T> {
    const attributes = { 'gatekeeper.semaphore': run.semaphore, 'gatekeeper.job': run.job, 'gatekeeper.token': run.token };
    return this.tracing.span('gatekeeper.job', attributes, async (span) => {
      const result = await work();
      span.set({ 'gatekeeper.outcome': 'finished' });
      return result;
    });
  }
}
