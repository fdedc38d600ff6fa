import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** A "run now" that was refused, or that no node started in time: nothing ran, and nothing will run for it later. */
export class RunNowRefusedError extends GatekeeperError {
  constructor(
    /** The job asked for. */
    readonly job: string,
    /**
     * Why, as a code:
     * - `UNKNOWN_JOB`: no job of that name on this node;
     * - `PAUSED`: its semaphore has `permits: 0`;
     * - `NO_ELIGIBLE_NODE`: no live node is admitted by its definition (group and acquirer patterns);
     * - `LOCKED`: every permit is kept by a run that ended, until its `lockAtLeastFor` is over (the message says when);
     * - `RECOVERING`: the cluster lost the semaphore's data and grants it again only after the recovery wait (the
     *   message says until when);
     * - `NOT_STARTED`: no node started it within the timeout (the request is withdrawn: it will not run later).
     */
    readonly reason: 'UNKNOWN_JOB' | 'PAUSED' | 'NO_ELIGIBLE_NODE' | 'LOCKED' | 'RECOVERING' | 'NOT_STARTED',
    detail: string,
  ) {
    super(`Run now of "${job}" refused (${reason}): ${detail}`);
  }
}
