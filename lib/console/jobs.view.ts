// The Jobs panel: this node's scheduled jobs (holder, token, expiry, paused, last run, next run), a filter, one
// job's details under its row, Run now (run-now.dialog.ts), and Pause or Resume by the job's name. The page calls
// refreshJobs() with every poll and tickJobs() every second.
import { api, messageOf, reasonOf, serverNow } from './console.api';
import type { JobPauseResult, JobSummary } from './console-api.types';
import { $, el, filterRows, KeptRows, syncRows, wholeRow } from './console.dom';
import { ago, seconds, times, token, until } from './console.format';
import { detailRow, jobPath, outcome, redrawDetail, reveal, select, selectedJob, show } from './job-detail.view';
import { askToRun, wireRunNow } from './run-now.dialog';
import { focusSchedule } from './schedules.view';

/** The jobs as last read; `undefined` until a read answered. */
let jobs: JobSummary[] | undefined;
const body = $<HTMLTableSectionElement>('jobs-rows');
const filter = $<HTMLInputElement>('jobs-filter');
const rows = new KeptRows(buildRow);

/** Times that count (in 2 s, 5 s ago): kept current by tickJobs(). */
const agoSpan = (ms: number): HTMLElement => el('span', { 'data-ago': ms }, ago(ms));
const untilSpan = (ms: number): HTMLElement => el('span', { 'data-until': ms }, until(ms));

/** What a job's row is matched against by the filter: its names and its states. */
function searchText(j: JobSummary): string {
  const last = j.lastRun;
  return [j.job, j.semaphore, j.mode, j.paused ? 'paused' : 'active', j.holders.length ? `held ${j.holders.map((h) => h.node).join(' ')}` : 'nobody unheld',
    last ? `${last.outcome} ${last.trigger}` : 'never', j.lastFailure ? 'has-failed' : '', j.failingSince === undefined ? '' : 'failing', j.cron || 'no-cron', j.timeZone || ''].join(' ');
}

function buildRow(j: JobSummary): HTMLTableRowElement {
  const holder = j.holders[0];
  const last = j.lastRun;
  const open = selectedJob() === j.job;
  return el('tr', { 'data-job': j.job, 'data-search': searchText(j), class: open ? 'selected' : undefined },
    el('th', { scope: 'row' }, j.job, ' ', j.paused ? el('span', { class: 'badge paused' }, 'paused') : null,
      j.failingSince === undefined ? null : [' ', el('span', { class: 'badge failing', title: `failing since ${times.at(j.failingSince)}` }, 'failing')]),
    el('td', { class: 'holders' }, j.holders.length ? j.holders.map((h) => h.node).join(', ') : 'nobody'),
    el('td', holder ? { class: 'token', title: String(holder.token) } : { class: 'token' }, holder ? token(holder.token) : ''),
    el('td', holder ? { 'data-expires': holder.expiresAt } : {}, holder ? seconds(holder.expiresAt - serverNow()) : ''),
    el('td', { class: 'last-run' }, last ? [outcome(last), ` ${last.trigger}, `, agoSpan(last.startedAt)] : 'never'),
    el('td', { class: 'next-run' }, j.nextRun === undefined ? (j.cron ? '-' : 'no cron') : [el('span', { class: 'when' }, times.clock(j.nextRun)), ' ', el('span', { class: 'when' }, '(', untilSpan(j.nextRun), ')')]),
    el('td', { class: 'actions' },
      el('button', { type: 'button', class: 'secondary', 'aria-label': `Details of ${j.job}`, 'aria-expanded': open ? 'true' : 'false', 'aria-controls': 'job-detail-row', onclick: () => toggle(j.job) }, open ? 'Hide details' : 'Details'),
      el('button', { type: 'button', 'aria-label': `Run ${j.job} now`, onclick: () => askToRun(j) }, 'Run now'),
      // A runtime schedule has one Pause, its own, under Schedules: this takes the operator to it.
      j.schedule
        ? el('button', { type: 'button', class: 'secondary', 'aria-label': `${j.job}: its schedule (pause, edit, remove)`, onclick: () => focusSchedule(j.job) }, 'Its schedule')
        : j.paused
          ? el('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${j.job}`, onclick: (e) => setPaused(j, 'resume', e.target as HTMLButtonElement) }, 'Resume')
          : el('button', { type: 'button', class: 'danger', 'aria-label': `Pause ${j.job}`, onclick: (e) => setPaused(j, 'pause', e.target as HTMLButtonElement) }, 'Pause')));
}

function renderRows(): void {
  if (jobs === undefined) return;
  const wanted: HTMLTableRowElement[] = [];
  const seen = new Set<string>();
  for (const j of jobs) {
    seen.add(j.job);
    wanted.push(rows.row(j.job, JSON.stringify([j, selectedJob() === j.job, times.utc]), j));
    if (selectedJob() === j.job) wanted.push(detailRow);
  }
  rows.keepOnly(seen);
  const chosen = selectedJob();
  if (chosen !== undefined && !seen.has(chosen)) select(undefined);
  syncRows(body, wanted.length ? wanted : [wholeRow(7, 'No scheduled job on this node.')]);
  filterRows(body, filter.value, $('jobs-count'), 'job');
}

/** Shows the job's details under its row (reading its description), or hides them when they are shown. */
async function toggle(job: string): Promise<void> {
  if (selectedJob() === job) {
    select(undefined);
    renderRows();
    return;
  }
  select(job);
  renderRows();
  await show(job);
  if (selectedJob() === job) reveal(rows.get(job));
}

/**
 * Pauses or resumes a job by its name (its semaphore, or its runtime schedule), then reads the jobs again so its
 * row, and those of the jobs sharing its semaphore, say so. Pausing a semaphore other listed jobs share asks first.
 */
async function setPaused(j: JobSummary, action: 'pause' | 'resume', button: HTMLButtonElement): Promise<void> {
  const sharing = (jobs ?? []).filter((o) => o.job !== j.job && o.semaphore === j.semaphore).map((o) => o.job);
  if (sharing.length && !window.confirm(`${action === 'pause' ? 'Pause' : 'Resume'} ${j.job}? Its semaphore ${j.semaphore} is shared: ${sharing.join(', ')} ${action === 'pause' ? 'stop' : 'start'} too.`)) return;
  const result = $('run-now-result');
  button.disabled = true;
  try {
    const r = await api<JobPauseResult>('POST', `${jobPath(j.job)}/${action}`);
    const done = r.paused ? 'paused' : 'resumed';
    result.className = 'status ok';
    result.dataset.reason = '';
    result.textContent = `${j.job}: ${done} (${r.by === 'schedule' ? `its runtime schedule, revision ${r.revision}` : `semaphore ${r.semaphore}, permits ${r.permits}`})`
      + `${r.alsoAffected.length ? `; also ${done}: ${r.alsoAffected.join(', ')}` : ''}.`;
  } catch (error) {
    result.className = 'status error';
    result.dataset.reason = reasonOf(error);
    result.textContent = `${action === 'pause' ? 'Pause' : 'Resume'} of ${j.job}: ${messageOf(error)}`;
  } finally {
    button.disabled = false;
  }
  await refreshJobs();
}

filter.addEventListener('input', () => filterRows(body, filter.value, $('jobs-count'), 'job'));
wireRunNow((job) => {
  if (selectedJob() !== job) void toggle(job);
  else reveal(rows.get(job));
});

/**
 * Reads the jobs (and the shown job's description) again; a failure is said in the panel and returned (for the
 * page's banner), never thrown. Until a read answers, the table says it has not been read, not "no job".
 */
export async function refreshJobs(): Promise<unknown> {
  try {
    jobs = await api<JobSummary[]>('GET', '/jobs');
    $('jobs-error').textContent = '';
  } catch (error) {
    $('jobs-error').textContent = `Jobs not updated: ${messageOf(error)}`;
    if (jobs === undefined) body.replaceChildren(wholeRow(7, `Not read yet: ${messageOf(error)}`));
    return error;
  }
  renderRows();
  const chosen = selectedJob();
  if (chosen) await show(chosen);
  return undefined;
}

/** Draws the rows and details again (the zone the times are shown in changed). */
export function redrawJobs(): void {
  renderRows();
  redrawDetail();
}

/** Counts the holders' time left down, and keeps "in 2 s" and "5 s ago" current. */
export function tickJobs(): void {
  for (const cell of Array.from(body.querySelectorAll<HTMLElement>('[data-expires]'))) cell.textContent = seconds(Number(cell.dataset.expires) - serverNow());
  for (const span of Array.from(body.querySelectorAll<HTMLElement>('span[data-ago]'))) span.textContent = ago(Number(span.dataset.ago));
  for (const span of Array.from(body.querySelectorAll<HTMLElement>('span[data-until]'))) span.textContent = until(Number(span.dataset.until));
}
