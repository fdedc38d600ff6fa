import type { RunCounts } from './job-history';
import type { JobDescription } from './job-view';
import type { RunRecord } from './run-record';

/** One job in a listing (the admin API's `GET jobs`, the console's Jobs panel): a {@link JobDescription} without its runs. */
export interface JobSummary {
  /** The job's name (`Class.method`). */
  readonly job: string;
  /** The semaphore its permit belongs to. */
  readonly semaphore: string;
  /** `hold` or `release`. */
  readonly mode: 'hold' | 'release';
  /** `permits: 0`: no node runs it. */
  readonly paused: boolean;
  /** Who holds its permit, with which token until when, as the answering node's view has it. */
  readonly holders: JobDescription['holders'];
  /** Its cron expression, when it has one. */
  readonly cron?: string;
  /** The zone its cron expression fires in; `undefined`: the process's zone. */
  readonly timeZone?: string;
  /** Its next fire instant (epoch ms); `undefined` without a cron expression. */
  readonly nextRun?: number;
  /** The newest run, with its outcome. */
  readonly lastRun?: RunRecord;
  /** The newest run that failed, aborted or was stopped. */
  readonly lastFailure?: RunRecord;
  /** Runs by how they ended, since the history began. */
  readonly counts: RunCounts;
  /** Scheduled instants nobody could run, and the newest of them. */
  readonly missed: JobDescription['missed'];
  /** Set while the job is failing: since when (see `JobHistoryView.failingSince`). */
  readonly failingSince?: number;
  /** Set on a runtime schedule's job (named by its id): it is paused, resumed and edited as that schedule. */
  readonly schedule?: true;
}

/** A description cut down to a listing's line: no runs, no skipped counts, the next fire instant only. */
export function summarizeJob(d: JobDescription): JobSummary {
  return {
    job: d.job,
    semaphore: d.semaphore,
    mode: d.mode,
    paused: d.paused,
    holders: d.holders,
    cron: d.cron,
    timeZone: d.timeZone,
    nextRun: d.nextRuns[0],
    lastRun: d.lastRun,
    lastFailure: d.lastFailure,
    counts: d.counts,
    missed: d.missed,
    ...(d.failingSince !== undefined && { failingSince: d.failingSince }),
  };
}
