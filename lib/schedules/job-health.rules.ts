import { parseDuration, type DurationInput } from '../core/duration';
import { InvalidInputError } from '../core/errors/invalid-input.error';
import type { JobDescription } from './job-view';
import type { RunRecord } from './run-record';

/** What the cluster's history says of one job's health (see {@link GatekeeperHealthIndicator.job}). */
export interface JobHealthDetails {
  /** The job's name, as `ScheduleService.jobs()` gives it. */
  readonly job: string;
  /** Paused on purpose (its semaphore's permits at 0): up, however long since it last completed. */
  readonly paused: boolean;
  /** When its newest completed run ended (epoch ms), among the runs the history keeps; absent if none did. */
  readonly lastSuccessAt?: number;
  /** Runs that ended other than completed since the newest that completed (all the kept ones if none did). */
  readonly failuresSince: number;
  /** The newest of those, with what it threw. */
  readonly lastFailure?: { readonly at: number; readonly outcome: string; readonly error?: string };
  /** Set while the job is failing by its `health` thresholds: since when (see `JobHistoryView.failingSince`). */
  readonly failingSince?: number;
  /** Why the check is down, when it is. */
  readonly message?: string;
}

/** A bad `within` of a job's health check, refused before any store call, naming the job and the field. */
export function jobHealthWithin(job: string, within: unknown): number {
  try {
    return parseDuration(within as DurationInput, undefined, 'within');
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(`Job "${job}": invalid within: ${error.reason}`, { of: `Job "${job}"`, field: 'within', reason: error.reason, kind: 'job', id: job });
    throw error;
  }
}

/**
 * One job's health from what the cluster's history says of it (`described`), at `now`: up while it completed a run
 * within `withinMs` and is not failing by its `health` thresholds, or while it is paused; down otherwise, with when it
 * last completed and what ended otherwise since. The one rule of the health check, the admin API and the CLI.
 */
export function judgeJob(described: Pick<JobDescription, 'job' | 'runs' | 'paused' | 'failingSince'>, withinMs: number, now: number): JobHealthDetails & { readonly status: 'up' | 'down' } {
  const { job } = described;
  const ended = described.runs.filter((run) => run.outcome !== 'running');
  const newestSuccess = ended.findIndex((run) => run.outcome === 'completed');
  const failures = newestSuccess < 0 ? ended : ended.slice(0, newestSuccess);
  const endOf = (run: RunRecord) => run.startedAt + (run.durationMs ?? 0);
  const lastSuccessAt = newestSuccess < 0 ? undefined : endOf(ended[newestSuccess]);
  const failure = failures[0];
  const details: JobHealthDetails = {
    job,
    paused: described.paused,
    ...(lastSuccessAt !== undefined && { lastSuccessAt }),
    failuresSince: failures.length,
    ...(failure && { lastFailure: { at: endOf(failure), outcome: failure.outcome, ...(failure.error !== undefined && { error: failure.error }) } }),
    ...(described.failingSince !== undefined && { failingSince: described.failingSince }),
  };
  const fresh = lastSuccessAt !== undefined && now - lastSuccessAt <= withinMs;
  const since = failure ? `; ${failures.length} run(s) since ended otherwise, the newest ${failure.outcome}${failure.error ? `: ${failure.error}` : ''}` : '';
  const down = described.paused ? undefined
    : described.failingSince !== undefined ? `${job} is failing since ${new Date(described.failingSince).toISOString()} (its health.failureThreshold of failed runs in a row)${since}`
    : fresh ? undefined
    : lastSuccessAt === undefined ? `no completed run of ${job} in its history${since}`
      : `${job} last completed ${Math.round((now - lastSuccessAt) / 1000)} s ago (${new Date(lastSuccessAt).toISOString()}), more than ${withinMs / 1000} s${since}`;
  return down === undefined ? { status: 'up', ...details } : { status: 'down', ...details, message: down };
}
