import { emptyHistory, type HistoryDelta, type JobHistory, type NodeTicks } from './job-history';
import { FAILED_OUTCOMES, type RunRecord } from './run-record';

/**
 * The history after one node's delta: runs merged by id (a run further along replaces its earlier record; an ended
 * run is never set back to `running`), newest first and trimmed to `keep`; the newest started instant, the last
 * failure and the totals carried past the trim. Pure: the writer applies it to what it read and compare-and-sets.
 */
export function mergeHistory(current: JobHistory | undefined, delta: HistoryDelta, keep: number, now: number): JobHistory {
  const base = current ?? emptyHistory(delta.runs[0]?.job ?? '');
  const byId = new Map(base.runs.map((run) => [run.id, run]));
  const counts: Record<string, number> = { ...base.counts };
  let { lastInstant, lastFailure } = base;
  for (const [outcome, count] of Object.entries(delta.dropped?.counts ?? {})) counts[outcome] = (counts[outcome] ?? 0) + (count ?? 0);
  const droppedFailure = delta.dropped?.lastFailure;
  if (droppedFailure && (!lastFailure || droppedFailure.startedAt >= lastFailure.startedAt)) lastFailure = droppedFailure;
  for (const run of delta.runs) {
    const before = byId.get(run.id);
    if (before && before.outcome !== 'running') continue;
    byId.set(run.id, run);
    if (run.instant !== undefined && run.trigger !== 'manual' && (lastInstant === undefined || run.instant > lastInstant)) lastInstant = run.instant;
    if (run.outcome === 'running') continue;
    counts[run.outcome] = (counts[run.outcome] ?? 0) + 1;
    if (FAILED_OUTCOMES.has(run.outcome) && (!lastFailure || run.startedAt >= lastFailure.startedAt)) lastFailure = run;
  }
  const runs = [...byId.values()].sort(newestFirst).slice(0, keep);
  const createdAt = current ? current.createdAt : now;
  return { ...base, job: base.job || delta.runs[0]?.job || '', revision: base.revision + 1, runs, lastInstant, lastFailure, counts, updatedAt: now, ...(createdAt !== undefined && { createdAt }) };
}

/**
 * A job's history written back after the store lost it: what this node held, with what was written since the loss
 * (`current`, if any) merged in by run id. Its revision is above both, so every node's next write builds on it.
 */
export function restoreHistory(held: JobHistory, current: JobHistory | undefined, keep: number, now: number): JobHistory {
  if (!current) return { ...held, revision: held.revision + 1, updatedAt: now };
  const { failingSince: _failing, turn: _turn, ...merged } = mergeHistory(held, { runs: current.runs }, keep, now);
  // The job's health as the later of the two judgements left it: a turn said since the loss is not said again.
  const judged = (current.turn?.at ?? -Infinity) > (held.turn?.at ?? -Infinity) ? current : held;
  // The older record's birth: nodes that held it see it as theirs, and one that made the newer builds on it.
  // The slot ledger as the further judged of the two, with the other's verdicts kept.
  const ledger = (current.judgedThrough ?? -Infinity) > (held.judgedThrough ?? -Infinity) ? current : held;
  const other = ledger === current ? held : current;
  const slots = [...(ledger.slots ?? []), ...(other.slots ?? []).filter((range) => !(ledger.slots ?? []).some((kept) => kept.verdict === range.verdict && kept.first <= range.first && range.last <= kept.last))];
  return {
    ...merged, revision: Math.max(held.revision, current.revision) + 1, ...(held.createdAt !== undefined && { createdAt: held.createdAt }),
    missed: ledger.missed, ...(ledger.judgedThrough !== undefined && { judgedThrough: ledger.judgedThrough, slots, ranAhead: [...new Set([...(ledger.ranAhead ?? []), ...(other.ranAhead ?? [])])].sort((a, b) => a - b) }),
    ...(judged.failingSince !== undefined && { failingSince: judged.failingSince }), ...(judged.turn !== undefined && { turn: judged.turn }),
  };
}

/**
 * Whether the stored history is not the one a node last wrote, nor grown from it: made anew after the store lost the
 * older (born later), or, for records from before `createdAt` existed, at a revision no later than the one written.
 */
export function madeAnew(stored: JobHistory | undefined, held: JobHistory): boolean {
  if (stored === undefined) return true;
  if (stored.createdAt !== undefined && held.createdAt !== undefined) {
    if (stored.createdAt !== held.createdAt) return stored.createdAt > held.createdAt;
    // The same record without an ended run this node wrote that it would still keep: it came back from a loss without
    // this node's last writes (another node wrote back an older copy of it). Every later write carries the runs it read.
    const kept = new Set(stored.runs.map((run) => run.id));
    const oldest = stored.runs.reduce((min, run) => Math.min(min, run.startedAt), Infinity);
    return held.runs.some((run) => run.outcome !== 'running' && !kept.has(run.id) && (stored.runs.length === 0 || run.startedAt >= oldest));
  }
  return stored.revision <= held.revision;
}

/**
 * The history as a reader should see it: a run still `running` while a later run holds a newer token was cut short
 * with its node (crashed, stopped or cut off before it could report), so it shows as `unknown`.
 */
export function readableHistory(history: JobHistory): JobHistory {
  let newestToken = -Infinity;
  const runs = [...history.runs].sort(newestFirst).map((run) => {
    const shown = run.outcome === 'running' && newestToken > run.token ? { ...run, outcome: 'unknown' as const } : run;
    newestToken = Math.max(newestToken, run.token);
    return shown;
  });
  return { ...history, runs };
}

/** Skipped ticks of `job` summed over every node's counts, by reason. */
export function skippedTicks(job: string, nodes: readonly NodeTicks[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const node of nodes) {
    for (const [reason, count] of Object.entries(node.skipped[job] ?? {})) total[reason] = (total[reason] ?? 0) + count;
  }
  return total;
}

/** A job's health turned, as the write of its history that turned it says (see {@link judgeHealth}). */
export type HealthChange =
  | { readonly kind: 'failing'; readonly job: string; readonly failures: number; readonly lastError?: string; readonly since: number }
  | { readonly kind: 'recovered'; readonly job: string; readonly successes: number; readonly failingSince: number };

/**
 * Judges a job's health on the history a write is about to store (`next`, merged from `base`): its ended runs in
 * start order, newest first, as the cluster knows them. It becomes failing once its newest `failureThreshold` ended
 * runs all failed, and recovered once a failing job's newest `recoveryThreshold` all completed (each at most the runs
 * kept: a threshold above `keep` is met at `keep`). Runs are judged by when they started, whichever node tells them
 * first, so a late flush of an older run cannot turn it. Returns the history to write and the change it makes, which
 * the one write that lands it reports: once for the cluster.
 */
export function judgeHealth(
  next: JobHistory,
  thresholds: { readonly failureThreshold: number; readonly recoveryThreshold: number },
  keep: number,
  /** The turn a change is stored with (made only when the job turns). */
  turn: () => { readonly id: string; readonly at: number },
): { history: JobHistory; change?: HealthChange } {
  const ended = endedRuns(next);
  // A threshold above what is kept is met at what is kept, less the kept runs that have not ended (never 0).
  const reachable = (threshold: number) => Math.max(1, Math.min(threshold, next.runs.length >= keep ? ended.length : threshold));
  const streak = (ok: boolean) => streakOf(ended, ok);
  if (next.failingSince === undefined) {
    const failures = streak(false);
    if (failures === 0 || failures < reachable(thresholds.failureThreshold)) return { history: next };
    const since = ended[failures - 1].startedAt;
    return { history: { ...next, failingSince: since, turn: turn() }, change: { kind: 'failing', job: next.job, failures, since, ...(ended[0].error !== undefined && { lastError: ended[0].error }) } };
  }
  const successes = streak(true);
  if (successes === 0 || successes < reachable(thresholds.recoveryThreshold)) return { history: next };
  const { failingSince, ...rest } = next;
  return { history: { ...rest, turn: turn() }, change: { kind: 'recovered', job: next.job, successes, failingSince } };
}

/** A history's ended runs as its health is judged on them: newest first by start, a replaced run not counted. */
function endedRuns(history: JobHistory): RunRecord[] {
  return history.runs.filter((run) => run.outcome !== 'running' && run.outcome !== 'replaced');
}

/** How many of `ended` (newest first) in a row completed (`ok`) or failed. */
function streakOf(ended: readonly RunRecord[], ok: boolean): number {
  let n = 0;
  while (n < ended.length && (ended[n].outcome === 'completed') === ok && (ok || FAILED_OUTCOMES.has(ended[n].outcome))) n++;
  return n;
}

/** The job's newest ended runs that failed in a row, on any node (0 after a completed one): what `failing` counts. */
export function consecutiveFailures(history: JobHistory): number {
  return streakOf(endedRuns(history), false);
}

function newestFirst(a: RunRecord, b: RunRecord): number {
  return b.startedAt - a.startedAt || b.token - a.token;
}
