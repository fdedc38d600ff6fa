import type { GroupMigrationReport, UndoMigrationReport } from '../permits/group-migrations';
import type { SemaphoreStatus } from '../permits/semaphore-status';
import { formatDuration } from '../core/duration';
import type { SemaphoreDefinition } from '../permits/semaphore-definition';
import { semaphoreKind } from '../permits/semaphore-kind';
import { renderTable } from './cli-table';

/** The CLI's name, as users type it. */
export const CLI_NAME = 'nestjs-gatekeeper';

const groupCell = (d: SemaphoreDefinition): string =>
  d.migratedFrom && d.migratedFrom.editedAt === undefined ? `${d.groupPattern} (migrated from ${d.migratedFrom.groupPattern})` : d.groupPattern;

const definitionRow = (d: SemaphoreDefinition) => [
  d.name,
  d.permits === 0 ? `0 (paused${d.pausedFrom ? ` from ${d.pausedFrom}` : ''})` : d.permits,
  formatDuration(d.durationMs),
  groupCell(d),
  d.acquirerPattern,
];

/**
 * Definitions as a table; durations written as a user writes them (`6s`, `90s`, `1500ms`). With `kinds`, a KIND
 * column says which are jobs and which back an election or an allocation.
 */
export function definitionTable(definitions: SemaphoreDefinition[], { kinds = false }: { kinds?: boolean } = {}): string {
  if (!definitions.length) return 'no definitions';
  if (!kinds) return renderTable(['NAME', 'PERMITS', 'DURATION', 'GROUP', 'ACQUIRER'], definitions.map(definitionRow));
  return renderTable(['NAME', 'KIND', 'PERMITS', 'DURATION', 'GROUP', 'ACQUIRER'], definitions.map((d) => {
    const [name, ...rest] = definitionRow(d);
    return [name, semaphoreKind(d.name), ...rest];
  }));
}

/** Whether `name` is a job's semaphore (not an election's or an allocation's). */
export const isJob = (name: string): boolean => semaphoreKind(name) === 'job';

/** An item of `--json` output with its kind. */
export const withKind = <T extends { name: string }>(item: T): T & { kind: string } => ({ ...item, kind: semaphoreKind(item.name) });

/** What `list` and `permits` say of the elections' and allocations' semaphores they left out (nothing if none). */
export function hiddenNote(hidden: readonly string[], what: string): string {
  if (hidden.length === 0) return '';
  const names = hidden.length <= 4 ? hidden.join(', ') : `${hidden.slice(0, 4).join(', ')}, … (+${hidden.length - 4})`;
  return `\n(not shown: ${what} of ${hidden.length} election/allocation semaphore(s): ${names}; --all shows them)`;
}

/** What `show` says of a semaphore that is not a job's: what it backs, and the command that shows it as such. */
export function kindNote(name: string): string | undefined {
  const kind = semaphoreKind(name);
  if (kind === 'job') return undefined;
  const own = name.slice(name.indexOf(':') + 1);
  return kind === 'election'
    ? `kind: election: it backs the leader election "${own}" (${CLI_NAME} leader ${own}); its permits change only with --force`
    : `kind: allocation: it backs the allocation "${own}" (${CLI_NAME} allocations ${own}); its permits change only with --force`;
}

/** What `show` says of a definition's last migration, if it remembers one. */
export function migrationNote(d: SemaphoreDefinition): string | undefined {
  const m = d.migratedFrom;
  if (!m) return undefined;
  const head = `migrated from group "${m.fromGroup}" to "${m.toGroup}" at ${new Date(m.at).toISOString()}; group pattern before: ${m.groupPattern}`;
  return m.editedAt === undefined
    ? `${head}\nto put it back: ${CLI_NAME} migrate --undo ${d.name}`
    : `${head}\ngroup pattern edited since (${new Date(m.editedAt).toISOString()}): undo leaves it alone`;
}

/** Live permits as a table, with the time each has left; with `kinds`, a KIND column (job, election, allocation). */
export function permitTable(statuses: SemaphoreStatus[], now: number, { kinds = false }: { kinds?: boolean } = {}): string {
  const rows = statuses.flatMap((s) =>
    s.permits.map((p) => [
      s.name, ...(kinds ? [semaphoreKind(s.name)] : []), p.acquirer, p.group, p.fencingToken, new Date(p.expiresAt).toISOString(),
      `${((p.expiresAt - now) / 1000).toFixed(1)}s`,
    ]),
  );
  const head = ['SEMAPHORE', ...(kinds ? ['KIND'] : []), 'HOLDER', 'GROUP', 'TOKEN', 'EXPIRES', 'LEFT'];
  return rows.length ? renderTable(head, rows) : 'no live permits';
}

/** One table of a migration or undo: NAME, FROM (pattern before), TO (pattern after), NOTE (why skipped). */
export function migrationTable(report: GroupMigrationReport | UndoMigrationReport): string {
  const rows = [
    ...report.changes.map((c) => [c.name, c.from, c.to, '']),
    ...report.skipped.map((s) => [s.name, s.groupPattern, '(unchanged)', `skipped: ${s.reason}`]),
  ];
  return rows.length ? renderTable(['NAME', 'FROM', 'TO', 'NOTE'], rows) : '';
}

const quoteArg = (arg: string) => (/^[\w.:@%+=,/-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);

/** A migration report for people. */
export function migrationText(report: GroupMigrationReport): string {
  const n = report.changes.length;
  const route = `from group "${report.fromGroup}" to "${report.toGroup}"`;
  const head = report.dryRun
    ? `dry run: would move ${n} semaphore(s) ${route}; nothing was written`
    : n
      ? `moved ${n} semaphore(s) ${route}; their holders let go at their next refresh`
      : `moved nothing ${route}`;
  const lines = [head];
  const table = migrationTable(report);
  if (table) lines.push(table);
  const live = report.target.liveNodes;
  lines.push(live.length ? `live nodes known in "${report.toGroup}": ${live.join(', ')}` : `no live node known in "${report.toGroup}"`);
  if (!report.dryRun && n) {
    const names = report.changes.map((c) => quoteArg(c.name)).join(' ');
    lines.push(`to put them back: ${CLI_NAME} migrate --undo --from-group ${quoteArg(report.fromGroup)} --to-group ${quoteArg(report.toGroup)} ${names}`);
  }
  return lines.join('\n');
}

/** An undo report for people. */
export function undoText(report: UndoMigrationReport): string {
  const n = report.changes.length;
  const head = report.dryRun
    ? `dry run: would put back ${n} semaphore(s); nothing was written`
    : n
      ? `put back ${n} semaphore(s); their holders let go at their next refresh`
      : 'put back nothing';
  const table = migrationTable(report);
  return table ? `${head}\n${table}` : `${head}: no selected semaphore remembers a migration`;
}
