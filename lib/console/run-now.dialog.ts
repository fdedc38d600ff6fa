// Run now: a dialog asks first (naming where it runs, and that a paused job is refused), then runs the job with a
// bounded wait and shows how it ended, or that it still runs when the wait is over.
import { api, messageOf, reasonOf } from './console.api';
import type { JobSummary, RunNowResult } from './console-api.types';
import { $ } from './console.dom';
import { times, token, took } from './console.format';
import { jobPath, selectedJob, show, stack } from './job-detail.view';

const dialog = $<HTMLDialogElement>('run-dialog');
const wait = $<HTMLSelectElement>('run-wait');
let asked: JobSummary | undefined;
let running = false;
/** What "Show its details" does (the Jobs panel opens the job's details under its row). */
let showDetails: (job: string) => void = () => undefined;

/** Wires the dialog's buttons; `details` opens a job's details. */
export function wireRunNow(details: (job: string) => void): void {
  showDetails = details;
  $('run-cancel').addEventListener('click', closeDialog);
  $('run-details').addEventListener('click', () => {
    const job = asked?.job;
    closeDialog();
    if (job) showDetails(job);
  });
  $('run-form').addEventListener('submit', (event) => {
    event.preventDefault();
    if (asked && !running) void runNow(asked.job, wait.value);
  });
}

/** Opens the dialog that asks whether to run `j` now. */
export function askToRun(j: JobSummary): void {
  if (running) return;
  asked = j;
  $('run-dialog-title').textContent = `Run ${j.job} now?`;
  $('run-dialog-what').textContent = `It runs once, now, in the cluster: on its holder (${j.holders.length ? j.holders.map((h) => h.node).join(', ') : 'nobody holds it now'}), else on a node its definition admits, under a permit of ${j.semaphore}, marked manual in the history.`;
  $('run-dialog-warning').textContent = j.paused ? 'It is paused: the cluster will refuse the run (PAUSED) until it is resumed.' : '';
  $('run-dialog-warning').hidden = !j.paused;
  wait.disabled = false;
  $('run-dialog-what').hidden = false;
  waitLabel().hidden = false;
  const status = $('run-outcome');
  status.textContent = '';
  status.className = 'status';
  delete status.dataset.outcome;
  $<HTMLButtonElement>('run-confirm').hidden = false;
  $<HTMLButtonElement>('run-confirm').disabled = false;
  $('run-details').hidden = true;
  $('run-cancel').textContent = 'Cancel';
  if (typeof dialog.showModal === 'function') dialog.showModal();
  else dialog.setAttribute('open', '');
  $('run-confirm').focus();
}

const waitLabel = (): HTMLLabelElement => wait.closest('label') as HTMLLabelElement;

function closeDialog(): void {
  if (typeof dialog.close === 'function') dialog.close();
  else dialog.removeAttribute('open');
}

/** The run's outcome, as the dialog and the panel's status line say it. */
function outcomeText(job: string, r: RunNowResult, waited: string): string {
  const where = `on ${r.node} under token ${token(r.token)}`;
  if (r.outcome === undefined) return `Run now of ${job}: started ${where} at ${times.at(r.startedAt)}, still running after ${waited}; its outcome will show in its history.`;
  const how = r.outcome === 'completed' ? `completed in ${took(r.durationMs)}` : `${r.outcome} after ${took(r.durationMs)}`;
  const error = r.error ? `: ${r.error}` : '';
  const more = r.outcome === 'failed' && !r.stack ? ' Its stack, if it had one, is in the job\'s details.' : '';
  return `Run now of ${job}: ${how} ${where} (started ${times.at(r.startedAt)}, request ${r.requestId})${error}.${more}`;
}

async function runNow(job: string, until: string): Promise<void> {
  const status = $('run-outcome');
  const result = $('run-now-result');
  const waited = wait.selectedOptions[0]?.textContent ?? until;
  running = true;
  $<HTMLButtonElement>('run-confirm').disabled = true;
  wait.disabled = true;
  status.className = 'status';
  status.dataset.outcome = 'asking';
  status.textContent = `Asking the cluster to run ${job}, then waiting up to ${waited} for how it ends…`;
  result.className = 'status';
  result.textContent = `Run now of ${job}: asking the cluster…`;
  let text: string;
  let ok: boolean;
  let reason = '';
  let ended: string;
  let failure: { id: string; stack: string } | undefined;
  try {
    const r = await api<RunNowResult>('POST', `${jobPath(job)}/run`, { wait: until });
    failure = r.stack ? { id: `run-now-${r.requestId}`, stack: r.stack } : undefined;
    ended = r.outcome === undefined ? 'running' : r.outcome;
    ok = r.outcome === undefined || r.outcome === 'completed';
    text = outcomeText(job, r, waited);
  } catch (error) {
    ended = 'refused';
    ok = false;
    reason = reasonOf(error);
    text = messageOf(error);
  } finally {
    running = false;
  }
  for (const line of [status, result]) {
    line.className = `status ${ok ? 'ok' : 'error'}`;
    line.textContent = text;
  }
  // A failed run's stack, folded, in the dialog (the run-now answer carries it as the history keeps it).
  const folded = stack(failure);
  if (folded) status.append(folded);
  status.dataset.outcome = ended;
  result.dataset.outcome = ended;
  $('run-dialog-title').textContent = `Run now of ${job}: ${ended === 'running' ? 'still running' : ended}`;
  $('run-dialog-what').hidden = true;
  $('run-dialog-warning').hidden = true;
  waitLabel().hidden = true;
  result.dataset.reason = reason;
  $('run-confirm').hidden = true;
  $('run-details').hidden = ended === 'refused';
  $('run-cancel').textContent = 'Close';
  if (dialog.open) $('run-cancel').focus();
  if (selectedJob() === job) await show(job).catch(() => undefined);
}
