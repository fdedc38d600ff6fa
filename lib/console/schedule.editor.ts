// The Schedules panel's editor: creates a schedule or edits one. A new schedule is written with expectedRevision 0
// (it must not exist yet); an edit with the revision it was opened at. A conflict keeps what the operator typed and
// offers the current version instead.
import { api, ApiError, messageOf } from './console.api';
import type { ScheduleChangeView, ScheduleDefinition, ScheduleOverview } from './console-api.types';
import { $ } from './console.dom';
import { duration, times } from './console.format';

/** What the editor is doing: creating (revision 0: it must not exist yet) or editing at the revision it was opened at. */
let editing: { mode: 'create' | 'edit'; id: string; revision: number } | undefined;
const form = $<HTMLFormElement>('schedule-form');
const more = form.querySelector('details.more') as HTMLDetailsElement;
const error = $('schedule-form-error');
/** What saving or reloading does after: the panel reads the schedules again. */
let refresh: () => Promise<unknown> = async () => undefined;

export const schedulePath = (id: string): string => `/schedules/${encodeURIComponent(id)}`;

/** The panel's status line: what a change did, with its reason code (`REVISION_CONFLICT`) when it was refused. */
export function sayScheduleResult(message: string, ok: boolean, reason = ''): void {
  const result = $('schedule-result');
  result.className = `status ${ok ? 'ok' : 'error'}`;
  result.dataset.reason = reason;
  result.textContent = message;
}

const TEXT_FIELDS = ['id', 'cron', 'timeZone', 'handler', 'duration', 'semaphore', 'groupPattern', 'acquirerPattern', 'catchUpWindow', 'replaceWait', 'grace', 'failureThreshold', 'recoveryThreshold'] as const;
const field = (name: string): HTMLInputElement => form.elements.namedItem(name) as HTMLInputElement;
const text = (name: string): string => field(name).value.trim();

function clearErrors(): void {
  error.textContent = '';
  delete error.dataset.reason;
  $('schedule-conflict').hidden = true;
  for (const input of Array.from(form.querySelectorAll('[aria-invalid]'))) input.removeAttribute('aria-invalid');
}

function fill(d: Partial<ScheduleDefinition> = {}): void {
  for (const name of TEXT_FIELDS) field(name).value = '';
  field('id').value = d.id || '';
  field('cron').value = d.cron || '';
  field('timeZone').value = d.timeZone || '';
  field('handler').value = d.handler || '';
  field('duration').value = d.durationMs === undefined ? '' : duration(d.durationMs);
  field('permits').value = String(d.permits === undefined ? 1 : d.permits);
  field('paused').checked = Boolean(d.paused);
  field('data').value = JSON.stringify(d.data === undefined ? null : d.data, null, 2);
  field('semaphore').value = d.semaphore || '';
  field('groupPattern').value = d.groupPattern || '';
  field('acquirerPattern').value = d.acquirerPattern || '';
  field('missedRuns').value = d.missedRuns || 'skip';
  field('catchUpWindow').value = d.catchUpWindowMs === undefined ? '' : duration(d.catchUpWindowMs);
  field('overlap').value = d.overlap || 'skip';
  field('replaceWait').value = d.replaceWaitMs === undefined ? '' : duration(d.replaceWaitMs);
  field('grace').value = d.health?.graceMs === undefined ? '' : duration(d.health.graceMs);
  field('failureThreshold').value = d.health ? String(d.health.failureThreshold) : '';
  field('recoveryThreshold').value = d.health ? String(d.health.recoveryThreshold) : '';
  // Options set away from their defaults are shown, not hidden under "More options".
  more.open = Boolean(d.missedRuns === 'runOnce' || d.overlap === 'replace' || d.health
    || (d.groupPattern && d.groupPattern !== '.*') || (d.acquirerPattern && d.acquirerPattern !== '.*') || (d.semaphore && d.id && d.semaphore !== `schedule:${d.id}`));
}

function describeBase(record?: ScheduleOverview): void {
  const creating = editing?.mode !== 'edit';
  $('schedule-form-title').textContent = creating ? 'New schedule' : `Edit ${editing?.id}`;
  $('schedule-save').textContent = creating ? 'Create schedule' : 'Save changes';
  field('id').readOnly = !creating;
  $('schedule-form-base').textContent = creating
    ? 'Written only if no schedule of this id exists (revision 0 expected). The handler is not checked: a node deployed later may have it.'
    : `Based on revision ${editing?.revision}${record ? `, changed by ${record.updatedBy} at ${times.at(record.updatedAt)}` : ''}: saving is refused if it changed since.`;
}

/** Opens the editor on a new schedule, or on `s` as shown. */
export function openEditor(mode: 'create' | 'edit', s?: ScheduleOverview): void {
  editing = { mode, id: s ? s.id : '', revision: s ? s.revision : 0 };
  clearErrors();
  sayScheduleResult('', true);
  fill(s?.definition);
  describeBase(s);
  form.hidden = false;
  form.scrollIntoView({ block: 'start' });
  field(mode === 'create' ? 'id' : 'cron').focus({ preventScroll: true });
}

function close(): void {
  form.hidden = true;
  editing = undefined;
  clearErrors();
}

function invalid(name: string, message: string): undefined {
  const input = field(name);
  if (input) {
    input.setAttribute('aria-invalid', 'true');
    if (more.contains(input)) more.open = true;
    input.focus();
  }
  error.textContent = message;
  return undefined;
}

/** The definition in the form, as the admin API takes it; `undefined` (and the field marked) when one is wrong. */
function read(): { id: string; body: Record<string, unknown> } | undefined {
  for (const name of ['id', 'cron', 'handler', 'duration']) {
    if (!text(name)) return invalid(name, `${field(name).closest('label')?.firstChild?.textContent?.trim()}: required.`);
  }
  let data: unknown;
  try {
    data = text('data') === '' ? null : JSON.parse(field('data').value);
  } catch (problem) {
    return invalid('data', `Data: not JSON (${messageOf(problem)}).`);
  }
  const body: Record<string, unknown> = { cron: text('cron'), handler: text('handler'), duration: text('duration'), data, paused: field('paused').checked };
  if (text('timeZone')) body.timeZone = text('timeZone');
  if (text('permits')) body.permits = Number(text('permits'));
  for (const name of ['semaphore', 'groupPattern', 'acquirerPattern']) if (text(name)) body[name] = text(name);
  body.missedRuns = field('missedRuns').value;
  if (body.missedRuns === 'runOnce' && text('catchUpWindow')) body.catchUpWindow = text('catchUpWindow');
  body.overlap = field('overlap').value;
  if (body.overlap === 'replace' && text('replaceWait')) body.replaceWait = text('replaceWait');
  // Health: sent when any of its fields is set, so that Save keeps what the schedule had (the form shows it whole).
  const health: Record<string, unknown> = {};
  if (text('grace')) health.grace = text('grace');
  for (const name of ['failureThreshold', 'recoveryThreshold']) if (text(name)) health[name] = Number(text(name));
  if (Object.keys(health).length > 0) body.health = health;
  return { id: text('id'), body };
}

async function save(): Promise<void> {
  clearErrors();
  const request = read();
  if (!request || !editing) return;
  const { id, body } = request;
  const expected = editing.revision;
  const button = $<HTMLButtonElement>('schedule-save');
  button.disabled = true;
  try {
    const r = await api<ScheduleChangeView>('PUT', `${schedulePath(id)}?expectedRevision=${expected}`, body);
    sayScheduleResult(`${id}: ${r.outcome === 'unchanged' ? 'nothing to change (the same definition)' : `${r.outcome}, revision ${r.revision}`}.`, true);
    close();
    await refresh();
  } catch (problem) {
    const answer = (problem instanceof ApiError && problem.body) || {};
    if (answer.reason === 'REVISION_CONFLICT') conflict(id, expected, answer.actualRevision);
    else if (answer.reason === 'WRITE_CONFLICT') error.textContent = `Not saved: other writers changed ${id} at the same moment every time; save again.`;
    else if (problem instanceof ApiError && problem.status === 400 && answer.field) invalid(answer.field.replace(/^health\./, ''), `Not saved: ${answer.message}`);
    else error.textContent = `Not saved: ${messageOf(problem)}`;
  } finally {
    button.disabled = false;
  }
}

/** Says what the stale revision means, keeps the form as typed, and offers the current version. */
function conflict(id: string, expected: number, actual: number | undefined): void {
  const creating = editing?.mode === 'create';
  let said: string;
  if (creating) said = `Not created: a schedule "${id}" exists already (revision ${actual}). Load it to edit it instead; what you typed here is replaced.`;
  else if (!actual) said = `Not saved: "${id}" was removed since you opened it at revision ${expected}. Reload to write it anew as a new schedule, or cancel.`;
  else said = `Not saved: "${id}" was changed by someone else since you opened it (you edited revision ${expected}; it is at revision ${actual} now). Your changes are still in the form: reload the current version (it replaces them) and make your change again.`;
  $('schedule-conflict-text').textContent = said;
  $('schedule-reload').textContent = creating ? 'Load the existing schedule' : 'Reload the current version';
  $('schedule-conflict').hidden = false;
  error.dataset.reason = 'REVISION_CONFLICT';
  $('schedule-conflict').scrollIntoView({ block: 'nearest' });
}

async function reload(): Promise<void> {
  const id = text('id') || editing?.id || '';
  clearErrors();
  try {
    const s = await api<ScheduleOverview>('GET', schedulePath(id));
    editing = { mode: 'edit', id: s.id, revision: s.revision };
    fill(s.definition);
    describeBase(s);
    sayScheduleResult(`${id}: reloaded revision ${s.revision}.`, true);
  } catch (problem) {
    if (problem instanceof ApiError && problem.status === 404) {
      editing = { mode: 'create', id, revision: 0 };
      describeBase();
      field('id').value = id;
      sayScheduleResult(`${id}: it no longer exists; saving creates it again.`, true);
    } else error.textContent = `Not reloaded: ${messageOf(problem)}`;
  }
  await refresh();
}

/** Wires the editor's buttons; `then` reads the schedules again after a save or a reload. */
export function wireEditor(then: () => Promise<unknown>): void {
  refresh = then;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void save();
  });
  $('schedule-cancel').addEventListener('click', close);
  $('schedule-reload').addEventListener('click', () => void reload());
  $('schedule-new').addEventListener('click', () => openEditor('create'));
}
