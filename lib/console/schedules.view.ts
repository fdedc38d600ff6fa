// The Schedules panel: the runtime schedules in the cluster (id, cron, zone, handler, paused, revision, next fire,
// last run from the job history kept under the schedule's id), a filter, pause, resume and remove, and the editor
// (schedule.editor.ts). Every change names the revision the operator saw (0 for a new one), so an edit made
// meanwhile elsewhere is refused (409 REVISION_CONFLICT), never overwritten. The page calls refreshSchedules() with
// every poll and tickSchedules() every second.
import { api, ApiError, messageOf } from './console.api';
import type { ScheduleChangeView, ScheduleOverview } from './console-api.types';
import { $, el, filterRows, KeptRows, syncRows, wholeRow } from './console.dom';
import { ago, times, until } from './console.format';
import { openEditor, sayScheduleResult, schedulePath, wireEditor } from './schedule.editor';

/** The schedules as last read; `undefined` until a read answered. */
let schedules: ScheduleOverview[] | undefined;
const body = $<HTMLTableSectionElement>('schedules-rows');
const filter = $<HTMLInputElement>('schedules-filter');
const rows = new KeptRows(buildRow);
const applyFilter = (): void => filterRows(body, filter.value, $('schedules-count'), 'schedule');

function searchText(s: ScheduleOverview): string {
  const d = s.definition;
  return [s.id, d.cron, d.timeZone, d.handler, d.semaphore, d.paused ? 'paused' : 'active', s.lastRun ? s.lastRun.outcome : 'never',
    s.handledHere ? 'handled-here' : 'not-on-this-node'].join(' ');
}

function buildRow(s: ScheduleOverview): HTMLTableRowElement {
  const d = s.definition;
  const last = s.lastRun;
  const next = s.nextRuns[0];
  const button = (action: 'pause' | 'resume' | 'remove', label: string, kind: string) => el('button', { type: 'button', class: kind, 'aria-label': `${label} ${s.id}`, onclick: (e) => change(s, action, e.target as HTMLButtonElement) }, label);
  return el('tr', { 'data-schedule': s.id, 'data-search': searchText(s) },
    el('th', { scope: 'row' }, s.id, ' ', d.paused ? el('span', { class: 'badge paused' }, 'paused') : null),
    el('td', { class: 'cron' }, d.cron),
    el('td', { class: 'zone' }, d.timeZone),
    el('td', { class: 'handler' }, d.handler, s.handledHere ? '' : el('span', { class: 'hint', title: 'This node has no @ScheduleHandler of this name' }, ' (not on this node)')),
    el('td', { class: 'revision' }, s.revision),
    el('td', { class: 'next-run' }, d.paused ? 'paused' : next === undefined ? '-' : [el('span', { class: 'when' }, times.clock(next)), ' (', el('span', { 'data-until': next }, until(next)), ')']),
    el('td', { class: 'last-run' }, last ? [el('span', { class: `badge outcome ${last.outcome}` }, last.outcome), ` on ${last.node}, `, el('span', { 'data-ago': last.startedAt }, ago(last.startedAt))] : 'never'),
    el('td', { class: 'actions' },
      el('button', { type: 'button', class: 'secondary', 'aria-label': `Edit ${s.id}`, onclick: () => openEditor('edit', s) }, 'Edit'),
      d.paused ? button('resume', 'Resume', 'secondary') : button('pause', 'Pause', 'secondary'),
      button('remove', 'Remove', 'danger')));
}

function render(): void {
  if (schedules === undefined) return;
  const seen = new Set(schedules.map((s) => s.id));
  const wanted = schedules.map((s) => rows.row(s.id, JSON.stringify([s, times.utc]), s));
  rows.keepOnly(seen);
  syncRows(body, wanted.length ? wanted : [wholeRow(8, 'No runtime schedule in the cluster.')]);
  applyFilter();
  const handlers = Array.from(new Set(schedules.map((s) => s.definition.handler))).sort();
  $('schedule-handlers').replaceChildren(...handlers.map((h) => el('option', { value: h })));
}

/** Pauses, resumes or removes `s` at the revision shown; a remove asks first. */
async function change(s: ScheduleOverview, action: 'pause' | 'resume' | 'remove', button: HTMLButtonElement): Promise<void> {
  if (action === 'remove' && !window.confirm(`Remove the schedule ${s.id} (revision ${s.revision})? It stops firing on every node; its history stays.`)) return;
  button.disabled = true;
  const query = `?expectedRevision=${s.revision}`;
  try {
    const r = await api<ScheduleChangeView>(action === 'remove' ? 'DELETE' : 'POST', action === 'remove' ? schedulePath(s.id) + query : `${schedulePath(s.id)}/${action}${query}`);
    sayScheduleResult(`${s.id}: ${r.outcome === 'unchanged' ? 'nothing to change' : `${action === 'remove' ? 'removed' : `${action}d`}, revision ${r.revision}`}.`, true);
  } catch (error) {
    const body = error instanceof ApiError ? error.body : undefined;
    sayScheduleResult(body?.reason === 'REVISION_CONFLICT' ? `${s.id}: not changed, it was edited meanwhile (now revision ${body.actualRevision || 'none'}); look again and retry.` : `${s.id}: ${messageOf(error)}`, false, body?.reason);
  } finally {
    button.disabled = false;
  }
  await refreshSchedules();
}

/** Brings the schedule `id`'s row on screen (shown, if a filter hid it), its Pause or Resume focused. */
export function focusSchedule(id: string): void {
  const row = Array.from(body.rows).find((r) => r.dataset.schedule === id);
  if (row && row.classList.contains('filtered-out')) {
    filter.value = '';
    filter.dispatchEvent(new Event('input'));
  }
  if (!row) {
    $('schedules').scrollIntoView({ block: 'start' });
    return;
  }
  row.scrollIntoView({ block: 'center' });
  const pause = Array.from(row.querySelectorAll('button')).find((b) => /^(Pause|Resume) /.test(b.getAttribute('aria-label') || ''));
  if (pause) pause.focus({ preventScroll: true });
}

wireEditor(() => refreshSchedules());
filter.addEventListener('input', applyFilter);
try {
  const zones = Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : [];
  $('time-zones').replaceChildren(...['UTC', ...zones.filter((z) => z !== 'UTC')].map((z) => el('option', { value: z })));
} catch {
  // no list: the field takes any zone name all the same
}

/** Reads the schedules again; a failure is said in the panel and returned (for the page's banner), never thrown. */
export async function refreshSchedules(): Promise<unknown> {
  try {
    schedules = await api<ScheduleOverview[]>('GET', '/schedules');
    $('schedules-error').textContent = '';
  } catch (error) {
    $('schedules-error').textContent = `Schedules not updated: ${messageOf(error)}`;
    if (schedules === undefined) body.replaceChildren(wholeRow(8, `Not read yet: ${messageOf(error)}`));
    return error;
  }
  render();
  return undefined;
}

/** Draws the rows again (the zone the times are shown in changed). */
export const redrawSchedules = render;

/** Keeps "in 2 s" and "5 s ago" current. */
export function tickSchedules(): void {
  for (const span of Array.from(body.querySelectorAll<HTMLElement>('span[data-ago]'))) span.textContent = ago(Number(span.dataset.ago));
  for (const span of Array.from(body.querySelectorAll<HTMLElement>('span[data-until]'))) span.textContent = until(Number(span.dataset.until));
}
