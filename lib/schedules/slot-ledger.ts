import type { JobHistory } from './job-history';
import type { SlotEntry } from './job-view';

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
