// The Jobs panel's details: one job's description and run history, in a row right under the job's own row (failures
// with their stack, folded until opened and kept open across polls).
import { api, messageOf } from './console.api';
import type { JobDescription, RunRecord, SlotEntry } from './console-api.types';
import { $, el, nodes, type Child } from './console.dom';
import { duration, times, token, took } from './console.format';

/** The job whose details are shown, and its last answer. */
let selected: string | undefined;
let detail: JobDescription | undefined;
/** What the details were last drawn from: unchanged, they are not drawn again (an open stack stays open). */
let detailShown = '';
/** The runs whose stack the operator opened (kept open across polls). */
const openStacks = new Set<string>();
/** The row under the selected job's: one element, moved with it. */
const detailBox = el('div', { id: 'job-detail' });
export const detailRow = el('tr', { class: 'detail-row', id: 'job-detail-row' }, el('td', { colspan: 7 }, detailBox));

export const jobPath = (job: string): string => `/jobs/${encodeURIComponent(job)}`;
export const selectedJob = (): string | undefined => selected;

/** A run's outcome as a badge. */
export const outcome = (run: { readonly outcome: string }): HTMLElement => el('span', { class: `badge outcome ${run.outcome}` }, run.outcome);
const byReason = (counts: Readonly<Record<string, number>> | undefined): string => Object.entries(counts ?? {}).filter(([, n]) => n).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';

/** A failure's stack, folded: the message is on the line above it; the stack opens on a click and stays open. */
export function stack(run: Pick<RunRecord, 'id' | 'stack'> | undefined, label = 'Stack'): HTMLDetailsElement | null {
  if (!run || !run.stack) return null;
  const fold = el('details', { class: 'stack', 'data-run': run.id, open: openStacks.has(run.id) }, el('summary', {}, label), el('pre', {}, run.stack));
  fold.addEventListener('toggle', () => (fold.open ? openStacks.add(run.id) : openStacks.delete(run.id)));
  return fold;
}

/** Shows `job`'s details from now on (`undefined`: none), saying it is being read until {@link show} answers. */
export function select(job: string | undefined): void {
  selected = job;
  detail = undefined;
  detailShown = '';
  if (job === undefined) return;
  delete detailBox.dataset.job;
  detailBox.replaceChildren(el('p', { class: 'hint' }, `Reading ${job}…`));
}

/** Reads `job`'s description and draws it, unless another job was selected meanwhile. */
export async function show(job: string): Promise<void> {
  try {
    const answer = await api<JobDescription>('GET', jobPath(job));
    if (selected !== job) return;
    detail = answer;
  } catch (error) {
    if (selected !== job) return;
    detail = undefined;
    detailShown = '';
    detailBox.replaceChildren(el('p', { class: 'error' }, `${job}: ${messageOf(error)}`));
    return;
  }
  renderDetail();
}

/** Draws the details again even if unchanged (the zone the times are shown in changed). */
export function redrawDetail(): void {
  detailShown = '';
  renderDetail();
}

/** Brings the job's `row` and its details on screen: the row at the top when the details would end below. */
export function reveal(row: HTMLTableRowElement | undefined): void {
  if (!row || !row.isConnected) return;
  const box = detailRow.getBoundingClientRect();
  const top = row.getBoundingClientRect().top;
  const bar = $('bar').getBoundingClientRect().bottom;
  if (top < bar || box.bottom > window.innerHeight) row.scrollIntoView({ block: 'start' });
}

function renderDetail(): void {
  const d = detail;
  if (!d) return;
  const key = JSON.stringify([d, times.utc]);
  if (key === detailShown) return;
  detailShown = key;
  const def = d.definition;
  const failure = d.lastFailure;
  const facts: Array<[string, Child]> = [
    ['Semaphore', `${d.semaphore} (${d.mode} mode)${d.paused ? ', paused' : ''}`],
    ['Definition', def ? `permits ${def.permits}, duration ${duration(def.durationMs)}, group ${def.groupPattern}, acquirer ${def.acquirerPattern}` : 'none in this node\'s view'],
    ['Held by', d.holders.length ? d.holders.map((h) => `${h.node} (${h.group}), token ${token(h.token)}, until ${times.at(h.expiresAt)}`).join('; ') : 'nobody'],
    ['Schedule', d.cron ? `${d.cron} (zone ${d.timeZone || 'the app\'s'})` : 'no cron expression'],
    ['Runs', byReason(d.counts)],
    ['Missed instants', d.missed.count ? `${d.missed.count}, newest ${times.at(d.missed.last)}` : '0'],
    ['Health', d.failingSince === undefined ? 'not failing' : `failing since ${times.at(d.failingSince)}`],
    ['Skipped ticks', byReason(d.skipped)],
    ['Last failure', failure ? [`${times.at(failure.startedAt)} on ${failure.node}: ${failure.outcome}${failure.error ? `: ${failure.error}` : ''}`, stack(failure, 'Its stack')] : 'none'],
  ];
  // No heading of its own: the job's row right above names it, and its Hide details button closes it.
  detailBox.dataset.job = d.job;
  detailBox.replaceChildren(...nodes([
    el('dl', { class: 'facts', 'aria-label': `Details of ${d.job}` }, facts.flatMap(([name, value]) => [el('dt', {}, name), el('dd', { 'data-fact': name }, value)])),
    slotStrip(d.job, d.slots),
    d.nextRuns.length || d.nextRunsNote
      ? el('div', {}, el('h4', {}, 'Next runs'), el('ol', { class: 'next-runs' }, d.nextRuns.map((t) => el('li', {}, times.at(t)))), d.nextRunsNote ? el('p', { class: 'note' }, d.nextRunsNote) : null)
      : null,
    el('table', { class: 'cards history' },
      el('caption', {}, `History: ${d.runs.length} run(s) kept, newest first`),
      el('thead', {}, el('tr', {}, ['Trigger', 'Instant', 'Node', 'Token', 'Started', 'Took', 'Outcome', 'Error'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', { id: 'job-runs' }, d.runs.length ? d.runs.map(runRow) : [el('tr', {}, el('td', { colspan: 8 }, 'No run kept yet.'))]))]));
}

/** The strip's marks, as its legend names them. */
const SLOT_LEGEND: ReadonlyArray<readonly [string, string]> = [
  ['ran', 'ran'], ['ran failed', 'failed'], ['caughtUp', 'caught up'], ['runNow', 'run now'], ['missed', 'missed (nothing ran it, nothing said why)'],
  ['paused', 'paused'], ['overlap', 'skipped: overlap'], ['noEligibleNode', 'no eligible node'],
];

/** How many of the newest slots the strip shows. */
const STRIP_SLOTS = 40;

/**
 * The job's recent slots, oldest to newest, one mark each (a range of instants with one verdict is one mark with its
 * count): what ran, failed, was missed or skipped, and why, in the mark's title and its accessible name.
 */
function slotStrip(job: string, slots: readonly SlotEntry[] | undefined): HTMLElement | null {
  if (!slots || slots.length === 0) return null;
  const shown = slots.slice(0, STRIP_SLOTS).reverse();
  const marks = shown.map((s) => {
    const failed = s.outcome !== undefined && s.outcome !== 'completed' && s.outcome !== 'running';
    const when = s.last === undefined ? times.at(s.instant) : `${times.at(s.instant)} to ${times.at(s.last)} (${s.count} instants)`;
    const what = s.outcome === undefined ? s.verdict : `${s.verdict}, ${s.outcome}${s.error ? `: ${s.error}` : ''}`;
    const label = `${when}: ${what}, ${s.node}`;
    return el('li', { class: `slot ${s.verdict}${failed ? ' failed' : ''}`, 'data-verdict': s.verdict, title: label, 'aria-label': label }, s.count > 1 ? `${s.count}` : '');
  });
  const missed = slots.filter((s) => s.verdict === 'missed').reduce((n, s) => n + s.count, 0);
  return el('div', { class: 'slots' },
    el('h4', {}, `Slots: the newest ${shown.length}${missed ? `, ${missed} instant(s) missed among them` : ''}`),
    el('ol', { class: 'slot-strip', 'aria-label': `Recent slots of ${job}, oldest first` }, marks),
    el('ul', { class: 'slot-legend', 'aria-label': 'What the marks mean' }, SLOT_LEGEND.map(([kind, text]) => el('li', {}, el('span', { class: `slot ${kind}`, 'aria-hidden': 'true' }), text))));
}

function runRow(r: RunRecord): HTMLTableRowElement {
  return el('tr', { 'data-trigger': r.trigger, 'data-run': r.id },
    el('td', { 'data-label': 'Trigger' }, r.trigger), el('td', { 'data-label': 'Instant' }, r.instant === undefined ? '' : times.clock(r.instant)),
    el('td', { 'data-label': 'Node' }, r.node), el('td', { 'data-label': 'Token', class: 'token', title: String(r.token) }, token(r.token)),
    el('td', { 'data-label': 'Started' }, times.clock(r.startedAt)), el('td', { 'data-label': 'Took' }, took(r.durationMs)), el('td', { 'data-label': 'Outcome' }, outcome(r)),
    el('td', { class: 'wrap full', ...(r.error && { 'data-label': 'Error' }) }, r.error || '', stack(r)));
}
