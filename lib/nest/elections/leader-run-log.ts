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
