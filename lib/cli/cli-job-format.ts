import { formatDuration } from '../core/duration';
import type { StoredHistory } from '../schedules/history-store';
import type { NodeTicks } from '../schedules/job-history';
import { readableHistory } from '../schedules/job-history.rules';
import type { JobDescription, JobHistoryView, JobPauseResult, RunNowResult } from '../schedules/job-view';
import type { RunRecord } from '../schedules/run-record';
import type { SlotEntry } from '../schedules/job-view';
import { formatAge } from './cli-cluster-format';
import { CLI_NAME } from './cli-format';
import { renderTable } from './cli-table';

const instant = (ms: number | undefined): string => (ms === undefined ? '-' : new Date(ms).toISOString());

/** Runs by outcome, as a phrase: `40 completed, 1 failed`. */
function countsText(counts: Readonly<Record<string, number | undefined>>): string {
  const parts = Object.entries(counts).filter(([, n]) => n).map(([outcome, n]) => `${n} ${outcome}`);
  return parts.length > 0 ? parts.join(', ') : 'none ended yet';
}

/** Skipped ticks by reason, as a phrase. */
function skippedText(skipped: Readonly<Record<string, number>>): string {
  const parts = Object.entries(skipped).sort(([a], [b]) => a.localeCompare(b)).map(([reason, n]) => `${reason} ${n}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** One run in a sentence: when, how it was started, where, under which token, how it ended. */
function runText(run: RunRecord): string {
  const took = run.durationMs === undefined ? '' : ` in ${formatAge(run.durationMs)}`;
  return `${instant(run.startedAt)} (${run.trigger}) on ${run.node}, token ${run.token}: ${run.outcome}${took}${run.error ? `: ${run.error}` : ''}`;
}

/** Runs as a table, newest first: TRIGGER, INSTANT, NODE, TOKEN, STARTED, TOOK, OUTCOME, ERROR. */
export function runTable(runs: readonly RunRecord[]): string {
  if (runs.length === 0) return 'no runs kept';
  return renderTable(
    ['TRIGGER', 'INSTANT', 'NODE', 'TOKEN', 'STARTED', 'TOOK', 'OUTCOME', 'ERROR'],
    runs.map((r) => [r.trigger, instant(r.instant), r.node, r.token, instant(r.startedAt), r.durationMs === undefined ? '-' : formatAge(r.durationMs), r.outcome, r.error ?? '']),
  );
}

/** `jobs history` for people: the runs, then the totals, missed instants, skipped ticks and the last failure. */
export function historyText(view: JobHistoryView): string {
  const missed = view.missed.count > 0 ? `${view.missed.count} (newest ${instant(view.missed.last)})` : '0';
  return [
    `${view.job}: ${view.runs.length} run(s), newest first`,
    runTable(view.runs),
    '',
    `runs since the history began: ${countsText(view.counts)}`,
    `missed instants: ${missed}`,
    `health: ${healthText(view.failingSince)}`,
    `skipped ticks (live nodes): ${skippedText(view.skipped)}`,
    `last failure: ${view.lastFailure ? runText(view.lastFailure) : 'none'}`,
    ...stackLines(view.lastFailure?.stack),
  ].join('\n');
}

/** `jobs slots` for people: one row per instant that ran, per run now, and per range of instants that did not run. */
export function slotsText(job: string, slots: readonly SlotEntry[]): string {
  if (slots.length === 0) return `${job}: no slots in its ledger yet`;
  return [
    `${job}: ${slots.length} row(s) of its slot ledger, newest first`,
    renderTable(
      ['INSTANT', 'VERDICT', 'NODE', 'STARTED', 'TOOK', 'OUTCOME', 'ERROR'],
      slots.map((s) => [
        s.last === undefined ? instant(s.instant) : `${instant(s.instant)} .. ${instant(s.last)} (${s.count})`,
        s.verdict, s.node, s.startedAt === undefined ? '-' : instant(s.startedAt), s.durationMs === undefined ? '-' : formatAge(s.durationMs), s.outcome ?? '-', s.error ?? '',
      ]),
    ),
  ].join('\n');
}

/** A job's health as its history says it: failing since when, or not failing. */
function healthText(failingSince: number | undefined): string {
  return failingSince === undefined ? 'not failing' : `failing since ${instant(failingSince)}`;
}

/** A failure's stack under its line, indented (none when the run kept none). */
function stackLines(stack: string | undefined): string[] {
  return stack ? stack.split('\n').map((line) => `    ${line.trim()}`) : [];
}

/** `jobs describe` for people: definition, holders, schedule, next fire instants, last run and failure, counts. */
export function describeText(d: JobDescription, answeredBy: string, now = Date.now()): string {
  const def = d.definition;
  const definition = def
    ? `permits ${def.permits}${d.paused ? ' (paused)' : ''}, duration ${formatDuration(def.durationMs)}, group ${def.groupPattern}, acquirer ${def.acquirerPattern}`
    : 'no definition in the view of the node asked';
  const holders = d.holders.length > 0
    ? d.holders.map((h) => `${h.node} (group ${h.group}), token ${h.token}, ${h.expiresAt > now ? `${formatAge(h.expiresAt - now)} left` : 'expired'}`).join('; ')
    : 'nobody';
  const schedule = d.cron ? `${d.cron} (zone ${d.timeZone ?? "the app's"})` : 'no cron expression (ticks come from @Interval, @Timeout or calls)';
  return [
    `job ${d.job}: semaphore ${d.semaphore}, ${d.mode} mode`,
    `definition: ${definition}`,
    `held by: ${holders}`,
    `schedule: ${schedule}`,
    ...(d.nextRuns.length > 0 || d.nextRunsNote ? [`next runs: ${d.nextRuns.map(instant).join(', ')}${d.nextRunsNote ? ` (${d.nextRunsNote})` : ''}`] : []),
    `last run: ${d.lastRun ? runText(d.lastRun) : 'none'}`,
    `health: ${healthText(d.failingSince)}`,
    `last failure: ${d.lastFailure ? runText(d.lastFailure) : 'none'}`,
    ...stackLines(d.lastFailure?.stack),
    `runs: ${countsText(d.counts)}; missed instants: ${d.missed.count}; skipped ticks: ${skippedText(d.skipped)}`,
    `(answered by ${answeredBy}; runs: ${CLI_NAME} jobs history ${d.job})`,
  ].join('\n');
}

/** `jobs run` for people: where it started, under which token. */
export function runNowText(r: RunNowResult, askedVia: string): string {
  return [
    `started ${r.job} on ${r.node} (instance ${r.instance}) under token ${r.token} at ${instant(r.startedAt)} (request ${r.requestId}, asked via ${askedVia})`,
    ...(r.outcome === undefined ? [] : [`it ${r.outcome}${r.durationMs === undefined ? '' : ` in ${r.durationMs} ms`}${r.error ? `: ${r.error}` : ''}`]),
    ...stackLines(r.stack),
    `its run shows in: ${CLI_NAME} jobs history ${r.job}`,
  ].join('\n');
}

/** `jobs pause` and `jobs resume` for people: what was paused or resumed, and which other jobs went with it. */
export function pauseText(r: JobPauseResult, askedVia: string): string {
  const done = r.paused ? 'paused' : 'resumed';
  const how = r.by === 'schedule'
    ? `its runtime schedule ${done}, revision ${r.revision ?? '-'}`
    : `its semaphore ${r.semaphore} ${r.paused ? 'paused (permits 0)' : `has ${r.permits ?? '-'} permit(s)`}`;
  return [
    `${done} ${r.job}: ${how} (asked via ${askedVia})`,
    ...(r.alsoAffected.length > 0 ? [`also ${done}, sharing the semaphore ${r.semaphore}: ${r.alsoAffected.join(', ')}`] : []),
  ].join('\n');
}

/** One job of `jobs list` as the cluster knows it: its last run, totals and missed count, or only skipped ticks. */
export interface ListedJob {
  readonly job: string;
  readonly lastRun?: RunRecord;
  readonly counts: Readonly<Record<string, number | undefined>>;
  readonly missed: number;
  readonly skipped: Readonly<Record<string, number>>;
}

/** Every job the cluster knows of (a history, or skipped ticks counted by a live node), by name. */
export function listedJobs(histories: readonly StoredHistory[], ticks: readonly NodeTicks[]): ListedJob[] {
  const jobs = new Map<string, ListedJob>();
  for (const { history } of histories) {
    // As readers see it: a run left running by a node that was taken over shows as unknown.
    jobs.set(history.job, { job: history.job, lastRun: readableHistory(history).runs[0], counts: history.counts, missed: history.missed.count, skipped: {} });
  }
  for (const node of ticks) {
    for (const [job, reasons] of Object.entries(node.skipped)) {
      const listed = jobs.get(job) ?? { job, counts: {}, missed: 0, skipped: {} };
      const skipped: Record<string, number> = { ...listed.skipped };
      for (const [reason, n] of Object.entries(reasons)) skipped[reason] = (skipped[reason] ?? 0) + n;
      jobs.set(job, { ...listed, skipped });
    }
  }
  return [...jobs.values()].sort((a, b) => a.job.localeCompare(b.job));
}

/** `jobs list` as a table: JOB, LAST RUN, TRIGGER, NODE, TOKEN, OUTCOME, RUNS, FAILED, MISSED, SKIPPED. */
export function jobListText(jobs: readonly ListedJob[], now = Date.now()): string {
  if (jobs.length === 0) return 'no job has a history in the cluster yet';
  const failed = (c: ListedJob['counts']) => (c.failed ?? 0) + (c.aborted ?? 0) + (c.stopped ?? 0);
  const total = (c: ListedJob['counts']) => Object.values(c).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  const skipped = (s: ListedJob['skipped']) => Object.values(s).reduce((sum, n) => sum + n, 0);
  return renderTable(
    ['JOB', 'LAST RUN', 'TRIGGER', 'NODE', 'TOKEN', 'OUTCOME', 'RUNS', 'FAILED', 'MISSED', 'SKIPPED'],
    jobs.map((j) => {
      const r = j.lastRun;
      return [j.job, r ? `${formatAge(now - r.startedAt)} ago` : '-', r?.trigger ?? '-', r?.node ?? '-', r?.token ?? '-', r?.outcome ?? '-', total(j.counts), failed(j.counts), j.missed, skipped(j.skipped)];
    }),
  );
}
