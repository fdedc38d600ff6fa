import type { JobRunOutcome, RunRecord } from './run-record';

/** A job's run history as `ScheduleService.history` answers it. */
export interface JobHistoryView {
  /** The job's name (`Class.method`, a runtime schedule's id, or `leader:<election>:<Class.method>`). */
  readonly job: string;
  /** Newest first: what the cluster keeps, with this node's runs not written yet. */
  readonly runs: readonly RunRecord[];
  /** The newest run that failed, aborted or was stopped (kept when it falls out of `runs`). */
  readonly lastFailure?: RunRecord;
  /** Runs by how they ended, since the history began (an outcome no run ended with is left out). */
  readonly counts: Readonly<Partial<Record<Exclude<JobRunOutcome, 'running' | 'unknown'>, number>>>;
  /** Scheduled instants the slot ledger judged missed (no node ran them, nothing said why), and the newest of them. */
  readonly missed: { readonly count: number; readonly last?: number };
  /**
   * The slot ledger, newest first: each scheduled instant that ran (with its run), each run now, and the instants
   * that did not run, as ranges with one verdict each (`missed`, `paused`, `overlap`, `noEligibleNode`). An instant
   * gets its verdict once it has settled (two history flushes and two store deadlines after it), judged once for the
   * cluster.
   */
  readonly slots: readonly SlotEntry[];
  /**
   * Set while the job is failing (its `health.failureThreshold` failed runs in a row, on any nodes): since when, the
   * start of the streak's first failure. Cleared when it recovers (`health.recoveryThreshold` completed runs in a row).
   */
  readonly failingSince?: number;
  /**
   * Ticks skipped, summed over the live nodes' counts (since each started), by reason: a deny reason code
   * (`NO_PERMIT_AVAILABLE`: another node holds it; `PAUSED`, `RECOVERING`, `STORE_UNAVAILABLE`, ...) or `OVERLAP`
   * (the previous run was still going); for a `@LeaderOnly` method, `NOT_LEADER` (another node leads) or
   * `NOT_READY` (the elections were starting or shutting down).
   */
  readonly skipped: Readonly<Record<string, number>>;
}

/** Everything about one job in one answer (`ScheduleService.describe`). */
export interface JobDescription extends JobHistoryView {
  /** The semaphore its permit belongs to (for a `@LeaderOnly` method: its election's, `election:<name>`). */
  readonly semaphore: string;
  /** `hold`: the holder keeps the job; `release`: the permit is given back after each run. */
  readonly mode: 'hold' | 'release';
  /** The semaphore's definition as this node's view has it; `undefined` when it has none. */
  readonly definition?: { readonly permits: number; readonly durationMs: number; readonly groupPattern: string; readonly acquirerPattern: string };
  /** `permits: 0`: no node runs it. */
  readonly paused: boolean;
  /** Who holds its permit, as this node's view has it. */
  readonly holders: ReadonlyArray<{ readonly node: string; readonly group: string; readonly instance: string; readonly token: number; readonly expiresAt: number }>;
  /** Its cron expression, when it has one. */
  readonly cron?: string;
  /** The zone its cron expression fires in; `undefined`: the process's zone. */
  readonly timeZone?: string;
  /** The next 10 fire instants (epoch ms); empty without a cron expression, and while paused. */
  readonly nextRuns: readonly number[];
  /** Why `nextRuns` has fewer than 10 instants of a cron expression (the cron package's horizon ended first). */
  readonly nextRunsNote?: string;
  /** The newest run. */
  readonly lastRun?: RunRecord;
}

/** A "run now" that started: where, under which permit, and when. */
export interface RunNowResult {
  /** The request's id, as the history's manual run names it. */
  readonly requestId: string;
  /** The job's name (`Class.method`). */
  readonly job: string;
  /** The acquirer name of the node that runs it. */
  readonly node: string;
  /** The instance that runs it. */
  readonly instance: string;
  /** The fencing token of the permit it runs under. */
  readonly token: number;
  /** When it started (epoch ms, the running node's clock). */
  readonly startedAt: number;
  /**
   * How the run ended, when the caller waited for it (`wait`) and it ended in time: `completed`, `failed` (with
   * `error`), `aborted`, `stopped` or `replaced`. Absent when not waited for, or still running at the end of the wait.
   */
  readonly outcome?: JobRunOutcome;
  /** How long the run took, with `outcome`. */
  readonly durationMs?: number;
  /** The error's message, for a failed run (with `outcome`). */
  readonly error?: string;
  /** The error's stack, bounded as the run history keeps it (see `RunRecord.stack`), when it had one. */
  readonly stack?: string;
}

/** What pausing or resuming a job by its name did (`ScheduleService.pauseJob`, `resumeJob`). */
export interface JobPauseResult {
  /** The job asked for. */
  readonly job: string;
  /** Whether the job is paused now. */
  readonly paused: boolean;
  /**
   * What was paused or resumed: `semaphore` for a `@ClusterSingleton` job (its semaphore's permits went to 0, or back
   * to the count the pause remembered), `schedule` for a runtime schedule (its own `paused`, as `pause(id)` does).
   */
  readonly by: 'semaphore' | 'schedule';
  /** The job's semaphore. */
  readonly semaphore: string;
  /** With `by: 'semaphore'`: the semaphore's permits now (0 while paused). */
  readonly permits?: number;
  /** With `by: 'schedule'`: the schedule's revision now. */
  readonly revision?: number;
  /**
   * The other jobs the same change pauses or resumes, sorted: those that share the semaphore, as the answering node
   * knows them (its own jobs on it, and the cluster's runtime schedules on it that are not paused themselves). A job
   * that only other nodes run is not known here. Empty with `by: 'schedule'`: a schedule pauses alone.
   */
  readonly alsoAffected: readonly string[];
}

/**
 * Why a scheduled instant did not run, as the slot ledger says it:
 * - `missed`: nothing ran it and nothing said why (the cluster was down, the store unreachable, the node that held
 *   the permit died before it ran or said so);
 * - `paused`: the job or its semaphore was paused;
 * - `overlap`: the node holding it skipped it, its previous run still going (`overlap: 'skip'`);
 * - `noEligibleNode`: live nodes ticked it, but none may take the permit (no live node is admitted by the
 *   semaphore's `groupPattern` and `acquirerPattern`).
 */
export type SlotVerdict = 'missed' | 'paused' | 'overlap' | 'noEligibleNode';

/**
 * One row of a job's slot ledger (`JobHistoryView.slots`): a scheduled instant that ran (its run), a run now, or
 * consecutive instants that did not run with one verdict (see {@link SlotVerdict}).
 */
export interface SlotEntry {
  /**
   * `ran` (by its schedule), `caughtUp` (an instant missed, run later by `missedRuns: 'runOnce'`), `runNow` (an
   * operator's run, no instant of the schedule), or why it did not run.
   */
  readonly verdict: 'ran' | 'caughtUp' | 'runNow' | SlotVerdict;
  /** The scheduled instant (epoch ms); for a run now, when it started. For a range, its oldest instant. */
  readonly instant: number;
  /** For a range of instants with one verdict: its newest instant. */
  readonly last?: number;
  /** How many instants the row stands for: 1, or a range's count (both ends included). */
  readonly count: number;
  /** The node that ran it, noted the skip, or judged it missed. */
  readonly node: string;
  /** For a run: when it started (the running node's clock). */
  readonly startedAt?: number;
  /** For a run that ended: how long it ran (ms). */
  readonly durationMs?: number;
  /** For a run: how it ended, or `running`. */
  readonly outcome?: JobRunOutcome;
  /** For a failed run: its error's message. */
  readonly error?: string;
}
