import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunRequest } from '../../schedules/run-request';

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

/** Carries a manual run from the call of the decorated method to the runner that decides it. */
export const manualRunContext = new AsyncLocalStorage<ManualRun>();

/**
 * Marks the call start-up makes of a `missedRuns: 'runOnce'` job, with when the node started (epoch ms): it runs only
 * an instant missed before then, if one is due. Instants after it are the timer's own ticks, even while the catch-up
 * is still deciding (its grant may take longer than a second on a loaded machine).
 */
export const catchUpContext = new AsyncLocalStorage<{ readonly startedAt: number }>();
