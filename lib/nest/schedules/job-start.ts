import type { RunRequest } from '../../schedules/run-request';
import type { RegisteredJob } from './job-registry';

/** A "run now" of a job being tried on this node: the tick path runs it, marked manual, if it can claim the request. */
export interface ManualRun {
  /** The request's id. */
  readonly request: string;
  /** Claims the request under the permit `token` (compare-and-set); false when another node did, or it was withdrawn. */
  claim(token: number): Promise<boolean>;
  /** Set once the run started here. */
  started?: { readonly token: number; readonly at: number };
  /** Tells the request how its run ended (best effort: a requester that waits reads it there). */
  finish(finished: NonNullable<RunRequest['finished']>): void;
}

/**
 * What starts a run of a job, the one input of the runner's one path: a tick of its schedule (a `@Cron` timer, a
 * runtime schedule's timer, or a direct call of the decorated method), a run now being tried here, or start-up's
 * catch-up of a `missedRuns: 'runOnce'` job, which runs only an instant missed before the node started (instants
 * after it are the timer's own ticks, even while the catch-up is still deciding).
 */
export type JobStart =
  | { readonly kind: 'tick' }
  | { readonly kind: 'manual'; readonly manual: ManualRun }
  | { readonly kind: 'startup'; readonly startedAt: number };

/** The one run path of jobs, as what a run-now request hears reaches it (see `ClusterSingletonRunner.run`). */
export interface JobRunner {
  run(job: RegisteredJob, start: JobStart): Promise<unknown>;
}
