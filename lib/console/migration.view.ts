// Migrations between groups, under Definitions: a dry run first with the exact changes shown, then apply; the same
// for an undo of the last migration.
import { api } from './console.api';
import type { MigrationReportView } from './console-api.types';
import { $, el, nodes } from './console.dom';
import { act } from './console.status';

interface MigrationRequest {
  readonly fromGroup: string;
  readonly toGroup: string;
  readonly names?: string[];
  readonly includeWildcards?: true;
}

const form = $<HTMLFormElement>('migrate-form');
const input = (name: string): HTMLInputElement => form.elements.namedItem(name) as HTMLInputElement;
const apply = $<HTMLButtonElement>('migrate-apply');
const undo = $<HTMLButtonElement>('undo-apply');
/** The request last previewed: what Apply sends. */
let previewed: MigrationRequest | undefined;

function request(): MigrationRequest {
  const names = input('names').value.split(',').map((n) => n.trim()).filter(Boolean);
  return { fromGroup: input('fromGroup').value.trim(), toGroup: input('toGroup').value.trim(), ...(names.length && { names }), ...(input('includeWildcards').checked && { includeWildcards: true }) };
}

function renderReport(title: string, report: MigrationReportView): void {
  const changes = report.changes || [];
  const skipped = report.skipped || [];
  const warnings = report.warnings || [];
  $('migration-report').replaceChildren(...nodes([
    el('h4', {}, title),
    changes.length === 0 ? el('p', {}, 'No change.') : el('div', { class: 'scroll' }, el('table', {},
      el('caption', {}, report.dryRun ? 'Would change (nothing written yet)' : 'Changed'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Semaphore'), el('th', { scope: 'col' }, 'Group pattern now'), el('th', { scope: 'col' }, 'After'))),
      el('tbody', {}, changes.map((c) => el('tr', {}, el('td', {}, c.name), el('td', {}, c.from), el('td', {}, c.to)))))),
    skipped.length ? el('p', { class: 'hint' }, `Skipped: ${skipped.map((s) => `${s.name} (${s.reason})`).join('; ')}`) : null,
    warnings.length ? el('p', { class: 'error' }, warnings.join(' ')) : null,
  ]));
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const asked = request();
  void act('preview migration', async () => {
    const report = await api<MigrationReportView>('POST', '/migrate', { ...asked, dryRun: true });
    renderReport(`Preview: ${asked.fromGroup} → ${asked.toGroup}`, report);
    previewed = asked;
    apply.disabled = (report.changes || []).length === 0;
  });
});
apply.addEventListener('click', () => act('migration', async () => {
  if (!previewed) return;
  const report = await api<MigrationReportView>('POST', '/migrate', previewed);
  renderReport(`Migrated: ${previewed.fromGroup} → ${previewed.toGroup}`, report);
  apply.disabled = true;
}));
$('undo-preview').addEventListener('click', () => act('preview undo', async () => {
  const report = await api<MigrationReportView>('POST', '/migrate/undo', { dryRun: true });
  renderReport('Preview: undo the last migration', report);
  undo.disabled = (report.changes || []).length === 0;
}));
undo.addEventListener('click', () => act('undo migration', async () => {
  renderReport('Undone', await api<MigrationReportView>('POST', '/migrate/undo', {}));
  undo.disabled = true;
}));
