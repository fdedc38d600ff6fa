/**
 * What started a run: its cron tick, an operator's "run now", a missed instant caught up, or a call of a
 * `@LeaderOnly` method on the leader (its own scheduling decorator's tick, or a direct call).
 */
export type RunTrigger = 'schedule' | 'manual' | 'catchUp' | 'call';

/**
 * How a run ended, or `running`:
 * - `completed`: the method returned;
 * - `failed`: it threw (the message is kept);
 * - `aborted`: its permit (for a `@LeaderOnly` method: its leadership) was lost while it ran and it stopped at the signal;
 * - `stopped`: `maxRunTime` was reached and it stopped at the signal;
 * - `replaced`: the next tick replaced it (`overlap: 'replace'`) and it stopped at the signal: not a failure;
 * - `unknown`: shown for a run still `running` in the history after a later holder took over (its node stopped,
 *   crashed or was cut off before it could say how the run ended); never written.
 */
export type JobRunOutcome = 'running' | 'completed' | 'failed' | 'aborted' | 'stopped' | 'replaced' | 'unknown';

/** One run of a job, as the cluster's history keeps it. */
export interface RunRecord {
  /** Unique per run: the instance, the fencing token, the start and the instance's count of runs. */
  readonly id: string;
  /** The job's name (`Class.method`, a runtime schedule's id, or `leader:<election>:<Class.method>`). */
  readonly job: string;
  /** What started it. */
  readonly trigger: RunTrigger;
  /** The scheduled instant the run is for (UTC epoch ms); absent for a job without a cron schedule. */
  readonly instant?: number;
  /** The acquirer name of the node that ran it. */
  readonly node: string;
  /** The id of the instance (process) that ran it. */
  readonly instance: string;
  /** The fencing token of the permit it ran under (for a `@LeaderOnly` method: the leadership's epoch). */
  readonly token: number;
  /** When it started (epoch ms, the running node's clock). */
  readonly startedAt: number;
  /** How long it ran, once it ended. */
  readonly durationMs?: number;
  /** How it ended, or `running`. */
  readonly outcome: JobRunOutcome;
  /** The "run now" request it answered, for a manual run. */
  readonly request?: string;
  /** The error's message, for a failed run (at most 500 characters). */
  readonly error?: string;
}

/** Outcomes a run ends with that count as a failure in the history. */
export const FAILED_OUTCOMES: ReadonlySet<JobRunOutcome> = new Set<JobRunOutcome>(['failed', 'aborted', 'stopped']);

/**
 * Builds a run's id from who ran it, under which token, when it started, and the instance's count of runs: two runs
 * under one token can start within the same millisecond (a catch-up and its tick's own run, or calls of a
 * `@LeaderOnly` method), and each must stay a run of its own.
 */
export function runId(instance: string, token: number, startedAt: number, sequence: number): string {
  return `${instance}:${token}:${startedAt}:${sequence}`;
}
