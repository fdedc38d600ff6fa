import type { Clock } from '../../core/clock';
import type { RunGrant } from '../../permits/permit-executor';
import type { RunLog } from './run-log';
import type { ScheduledJob } from './scheduled-job';

/** Since when the history knows a job (its first write), as the catch-up reads it. */
export interface JobKnownSince {
  knownSince(job: string): Promise<number | undefined>;
  /**
   * Instants of `job` up to `last` passed while nobody could run it: the history judges them in its slot ledger as
   * soon as they settle, even when no run of the job is written then (a daily job back after an outage).
   */
  vacant(job: string, last: number): void;
}

/**
 * The catch-up of `missedRuns: 'runOnce'`. A fresh grant says since when no permit of the job's semaphore could vouch
 * (`vacantSince`: any run under an earlier permit started before it), so the job's fire instants after it and
 * before the tick (or, at start-up, before now) were run by nobody: the newest of them is the one instant to catch
 * up, if it is within the catch-up window. (Whether an instant was missed is the slot ledger's to judge and say,
 * once for the cluster: `judgeSlots`.) The next holder's grant comes after this one's permit, so no instant is
 * caught up twice. Instants count from the vacancy or from when the job became known (its history's first write, or,
 * for a job with none, when this node armed its schedules), whichever is later: a job new to a semaphore inherits
 * nothing of its vacancy.
 */
export class MissedRuns {
  /** When this node armed its jobs' schedules (its bootstrap): a job with no history is known from then. */
  private armedSince = -Infinity;

  constructor(
    private readonly history: JobKnownSince,
    private readonly clock: Clock,
    private readonly log: RunLog,
    /** The clock permits are timed by (a grant's `vacantSince` is on it): the store's, where it has one. */
    private readonly permitClock: Clock = clock,
  ) {}

  /** Notes when this node armed its jobs' schedules. */
  armed(at: number): void {
    this.armedSince = at;
  }

  /** Notes the instants of `job` missed before `before` (ms) and returns the one to catch up, if any. */
  async check(job: ScheduledJob | undefined, grant: RunGrant, before: number): Promise<number | undefined> {
    if (!job?.trigger || grant.outcome !== 'granted' || grant.vacantSince === undefined) return undefined;
    // Fire instants are on this node's clock; the vacancy on the permits' clock: counted on this node's.
    const vacantSince = grant.vacantSince + (this.clock === this.permitClock ? 0 : this.clock.now() - this.permitClock.now());
    // Read only when some instant passed in the vacancy (rare: a store call on a fresh grant after one).
    if (job.trigger.firesBetween(vacantSince, before, 1).count === 0) return undefined;
    const known = (await this.history.knownSince(job.name)) ?? this.armedSince;
    const { count, last } = job.trigger.firesBetween(Math.max(vacantSince, known), before);
    if (count === 0 || last === undefined) return undefined;
    this.history.vacant(job.name, last);
    const { missedRuns, catchUpWindowMs } = job.options;
    if (missedRuns !== 'runOnce') return undefined;
    const windowMs = catchUpWindowMs ?? job.trigger.shortestGapMs;
    const due = this.clock.now() - last <= windowMs;
    this.log.log(`${job.name}: ${count} fire instant(s) passed while nobody could run it, the newest ${new Date(last).toISOString()}; ${
      due ? 'running it once now (missedRuns: runOnce)' : `older than the catch-up window of ${windowMs} ms, not run`}`);
    return due ? last : undefined;
  }
}
