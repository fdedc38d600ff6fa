import type { JobHistory, SlotVerdict } from './job-history';
import type { JobRunOutcome } from './run-record';

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

/**
 * A job's slot ledger as people read it, newest first: its runs (each names its instant) and the ranges of instants
 * that did not run, at most `limit` rows. What the history keeps: its `keep` newest runs and 50 newest ranges.
 */
export function slotLedger(history: JobHistory, limit = Infinity): SlotEntry[] {
  const rows: SlotEntry[] = [];
  for (const run of history.runs) {
    if (run.trigger === 'call') continue;
    const ran = run.trigger === 'manual' ? 'runNow' : run.trigger === 'catchUp' ? 'caughtUp' : 'ran';
    rows.push({
      verdict: ran, instant: run.instant ?? run.startedAt, count: 1, node: run.node, startedAt: run.startedAt, outcome: run.outcome,
      ...(run.durationMs !== undefined && { durationMs: run.durationMs }), ...(run.error !== undefined && { error: run.error }),
    });
  }
  for (const range of history.slots ?? []) {
    rows.push({ verdict: range.verdict, instant: range.first, ...(range.last !== range.first && { last: range.last }), count: range.count, node: range.node });
  }
  return rows.sort((a, b) => (b.last ?? b.instant) - (a.last ?? a.instant)).slice(0, limit);
}
