// The Definitions section: the jobs' semaphore definitions with inline edits, Pause and Resume. A row the operator
// is editing is not drawn again by the polls until it is saved, and Save sends only the fields edited in it: a row
// drawn a poll before another change (a migration, another operator) never writes its older values back.
import { api } from './console.api';
import type { DefinitionView, SemaphoreDefinition } from './console-api.types';
import { $, el, labelCells } from './console.dom';
import { duration } from './console.format';
import { act } from './console.status';

const body = $<HTMLTableSectionElement>('definitions-rows');
/** The definitions whose row has unsaved edits. */
const dirty = new Set<string>();
const path = (name: string): string => `/definitions/${encodeURIComponent(name)}`;

type Field = 'permits' | 'duration' | 'groupPattern' | 'acquirerPattern';

function buildRow(d: DefinitionView): HTMLTableRowElement {
  /** What the row was drawn with: Save compares against it. */
  const drawn: Record<Field, string> = {
    permits: String(d.permits), duration: duration(d.durationMs), groupPattern: d.groupPattern, acquirerPattern: d.acquirerPattern,
  };
  const input = (field: Field, value: string, label: string, type = 'text') => el('input', {
    type, name: field, value, 'aria-label': `${label} of ${d.name}`, oninput: () => dirty.add(d.name), ...(type === 'number' && { min: 0, step: 1 }),
  });
  const paused = d.permits === 0;
  return el('tr', { 'data-name': d.name },
    el('th', { scope: 'row' }, d.name, ' ', paused ? el('span', { class: 'badge paused' }, 'paused') : null),
    // data-label: on a phone the rows are cards (console.css) and each cell shows its column's name.
    el('td', { 'data-label': 'Permits' }, input('permits', drawn.permits, 'Permits', 'number')),
    el('td', { 'data-label': 'Duration' }, input('duration', drawn.duration, 'Duration')),
    el('td', { 'data-label': 'Group pattern' }, input('groupPattern', drawn.groupPattern, 'Group pattern')),
    el('td', { 'data-label': 'Acquirer pattern' }, input('acquirerPattern', drawn.acquirerPattern, 'Acquirer pattern')),
    el('td', { class: 'actions' },
      el('button', { type: 'button', onclick: (e) => save(d.name, drawn, (e.target as HTMLElement).closest('tr') as HTMLTableRowElement) }, 'Save'),
      paused
        ? el('button', { type: 'button', class: 'secondary', onclick: () => act(`resume ${d.name}`, () => api('POST', `${path(d.name)}/resume`, {})) }, 'Resume')
        : el('button', { type: 'button', class: 'danger', onclick: () => act(`pause ${d.name}`, () => api('POST', `${path(d.name)}/pause`)) }, 'Pause')));
}

/** Sends the fields of `row` that differ from what it was drawn with (`drawn`). */
function save(name: string, drawn: Readonly<Record<Field, string>>, row: HTMLTableRowElement): Promise<void> {
  const patch: Partial<Record<Field, string | number>> = {};
  for (const field of Object.keys(drawn) as Field[]) {
    const value = (row.querySelector(`input[name="${field}"]`) as HTMLInputElement).value;
    if (value !== drawn[field]) patch[field] = field === 'permits' ? Number(value) : value;
  }
  return act(`save ${name}`, async () => {
    await api<SemaphoreDefinition>('PATCH', path(name), patch);
    dirty.delete(name);
  });
}

// Jobs only: elections and allocations have their own sections, and their permits are not a job's (no Save or
// Pause for them here; the CLI changes them with --force).
export const isJob = (item: { readonly kind?: string }): boolean => (item.kind || 'job') === 'job';
// A runtime schedule's semaphore (the API names its schedules) is the schedule's: it writes the permits and patterns
// back when it changes, so it is edited and paused with the schedule, under Schedules, not here as well.
const isSchedules = (d: DefinitionView): boolean => Boolean(d.schedules && d.schedules.length);

/** Draws the jobs' definitions (keeping rows with unsaved edits), and names those listed elsewhere. */
export function renderDefinitions(definitions: readonly DefinitionView[]): void {
  const existing = new Map(Array.from(body.rows, (row) => [row.dataset.name, row]));
  body.replaceChildren(...definitions.filter((d) => isJob(d) && !isSchedules(d)).map((d) => {
    const old = existing.get(d.name);
    return old && dirty.has(d.name) ? old : buildRow(d);
  }));
  labelCells(body);
  const others = definitions.filter((d) => !isJob(d)).map((d) => d.name);
  const scheduled = definitions.filter((d) => isJob(d) && isSchedules(d)).length;
  $('definitions-others').textContent = [
    others.length ? `Not listed here: ${others.join(', ')} (elections and allocations: see Cluster and Allocations).` : '',
    scheduled ? `Nor the semaphores of runtime schedules (${scheduled}): each is edited and paused with its schedule, under Schedules.` : '',
  ].filter(Boolean).join(' ');
}
