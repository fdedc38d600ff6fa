// The Tasks section: counts by type and state, the tasks to act on (retry or cancel), and a group's progress.
import { api } from './console.api';
import type { TaskGroupStatus, TaskRecord, TaskStateCounts } from './console-api.types';
import { $, el, fillRows, wholeRow } from './console.dom';
import { act } from './console.status';

const STATES = ['pending', 'running', 'done', 'failed', 'invalid', 'cancelled'] as const;

function taskRow(t: TaskRecord): HTMLTableRowElement {
  const error = t.attempts[t.attempts.length - 1]?.error || '';
  const id = encodeURIComponent(t.id);
  const retry = ['failed', 'invalid', 'cancelled'].includes(t.state);
  return el('tr', {},
    el('th', { scope: 'row', class: 'wrap' }, t.id), el('td', {}, t.state), el('td', {}, t.attempts.length), el('td', { class: 'wrap' }, error),
    el('td', {}, retry
      ? el('button', { type: 'button', onclick: () => act(`retry ${t.id}`, () => api('POST', `/tasks/${id}/retry`)) }, 'Retry')
      : el('button', { type: 'button', class: 'danger', onclick: () => act(`cancel ${t.id}`, () => api('POST', `/tasks/${id}/cancel`)) }, 'Cancel')));
}

export function renderTasks(counts: Readonly<Record<string, TaskStateCounts>>, tasks: readonly TaskRecord[]): void {
  const types = Object.keys(counts).sort();
  fillRows($('task-counts'), types.length ? types.map((t) => el('tr', {}, el('th', { scope: 'row' }, t), STATES.map((s) => el('td', {}, counts[t][s])))) : [wholeRow(7, 'No task.')]);
  fillRows($('task-rows'), tasks.map(taskRow));
}

$('group-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const field = (name: string): string => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
  void act('group progress', async () => {
    const g = await api<TaskGroupStatus>('GET', `/tasks/groups/${encodeURIComponent(field('type'))}/${encodeURIComponent(field('name'))}`);
    $('group-progress').replaceChildren(el('p', {},
      `${g.id}: ${g.finished} of ${g.total ?? '?'} ended, ${g.failed} failed; round ${g.round}; join ${g.joinSubmittedAt ? (g.join || 'submitted') : 'not yet'}`),
    el('p', { class: 'hint' }, STATES.filter((s) => g.states[s]).map((s) => `${s} ${g.states[s]}`).join(', ')));
  });
});
