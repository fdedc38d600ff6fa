import { randomUUID } from 'node:crypto';
import type { CheckIn } from '../check-in';
import type { RunLog } from './run-log';
import type { ObservedRun, ObservedRunEnd } from './run-observer';
import type { RunPipelineObserver } from './run-observers';
import type { ScheduledJob } from './scheduled-job';

/**
 * A job's check-ins with its monitor (the job option `checkIn`), sent from the node that ran each scheduled run: its
 * start, then its success or failure (the same run id in both), and a failure for each instant the slot ledger
 * judged missed (told once for the cluster, by the node whose write judged it). A run now is no scheduled
 * run: it checks in nothing. Each check-in is sent in the background, after the run's start was (or gave up), and
 * waits at most the job's `timeoutMs`: nothing the monitor does reaches the job. Failures are logged once per streak
 * per job.
 */
export class CheckIns implements RunPipelineObserver {
  /** A run's id and its start check-in, until its end is sent. */
  private readonly runs = new WeakMap<ObservedRun, { readonly id: string; readonly started: Promise<void> }>();
  /** Jobs whose last check-in failed: their next success is logged. */
  private readonly failing = new Set<string>();

  constructor(
    /** The check-ins of a job of this node, if it has any. */
    private readonly of: (job: string) => CheckIn | undefined,
    private readonly log: RunLog,
  ) {}

  started(run: ObservedRun): void {
    const checkIn = run.trigger === 'manual' ? undefined : this.of(run.job);
    if (!checkIn) return;
    const id = randomUUID();
    this.runs.set(run, { id, started: checkIn.start ? this.send(run.job, checkIn.start, id, checkIn.timeoutMs) : Promise.resolve() });
  }

  ended(run: ObservedRun, end: ObservedRunEnd): void {
    const sent = this.runs.get(run);
    const checkIn = sent && this.of(run.job);
    if (!sent || !checkIn) return;
    this.runs.delete(run);
    const url = end.outcome === 'completed' ? checkIn.success : checkIn.failure;
    if (url !== undefined) void sent.started.then(() => this.send(run.job, url, sent.id, checkIn.timeoutMs));
  }

  missed(job: ScheduledJob): void {
    // One failure per missed instant: the node whose write judged it says it, so once for the cluster.
    const checkIn = this.of(job.name);
    if (checkIn?.failure !== undefined) void this.send(job.name, checkIn.failure, randomUUID(), checkIn.timeoutMs);
  }

  /** Sends one check-in; never rejects. */
  private async send(job: string, template: string, id: string, timeoutMs: number): Promise<void> {
    const url = template.replaceAll('{run}', id);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      if (this.failing.delete(job)) this.log.log(`${job}: check-ins reach ${new URL(url).host} again`);
    } catch (error) {
      if (this.failing.has(job)) return;
      this.failing.add(job);
      const why = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
      this.log.warn(`${job}: a check-in to ${new URL(url).host} failed (${why}); the job runs on, and check-ins are tried at every run`);
    }
  }
}
