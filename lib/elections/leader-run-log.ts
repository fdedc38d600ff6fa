import type { LeaderLease } from './leader-lease';

/** How a `@LeaderOnly` run ended: it returned, it threw, or it stopped because this node's leadership ended. */
export type LeaderRunOutcome = 'completed' | 'failed' | 'aborted';

/** Why a call of a `@LeaderOnly` method did not run: another node leads, or the elections are starting or stopping. */
export const LEADER_SKIP = { NOT_LEADER: 'NOT_LEADER', NOT_READY: 'NOT_READY' } as const;

/**
 * Where the elections tell `@LeaderOnly` runs: the run history's recorder, which the module wires in (the
 * elections never import the schedules). Every call is in memory only; the recorder writes in the background.
 * Used inside the module, not by applications.
 */
export interface LeaderRunLog {
  /** A run that starts now, under the leadership of epoch `token`; returns the record to pass to {@link finished}. */
  started(run: { job: string; trigger: 'call'; token: number }): object;
  /** How the run ended (`error`: what it threw, an `Error` whose message and stack are kept, or a message). */
  finished(run: object, outcome: LeaderRunOutcome, durationMs: number, error?: Error | string): unknown;
  /** A call that did not run here, counted by reason. */
  skippedTick(job: string, reason: string): void;
}

/**
 * Runs `run` as the `@LeaderOnly` run `job` under `lease` and tells `log` how it ended: completed, failed, or aborted
 * (whatever it threw once the leadership ended, it stopped because of that, as a job's run at its lost permit).
 */
export async function loggedLeaderRun(log: LeaderRunLog, job: string, lease: LeaderLease, run: () => Promise<unknown>): Promise<unknown> {
  const record = log.started({ job, trigger: 'call', token: lease.epoch });
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const value = await run();
    log.finished(record, 'completed', took());
    return value;
  } catch (error) {
    log.finished(record, lease.signal.aborted ? 'aborted' : 'failed', took(), error instanceof Error ? error : String(error));
    throw error;
  }
}
