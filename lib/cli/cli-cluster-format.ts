import type { StoreMoveMark } from '../store/store-moves';
import type { ResignResult } from '../elections/election-admin';
import type { ClusterOverview, ElectionStatus, ParticipantStatus } from '../elections/election-status';
import { formatDuration } from '../core/duration';
import { CLI_NAME } from './cli-format';
import { renderTable } from './cli-table';

/** A span as people read it: `850ms`, `12.3s`, `4m05s`, `2h07m`, `3d04h`. */
export function formatAge(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h${pad(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86_400)}d${pad(Math.floor(s / 3_600) % 24)}h`;
}

/** Why nobody leads an election, for a table cell or a sentence. */
function vacancy(e: ElectionStatus): string {
  if (!e.definition) return 'no definition';
  if (e.definition.paused) return 'paused';
  if (e.steppingDown !== undefined) return `epoch ${e.steppingDown} stepping down`;
  return e.lastEpoch === undefined ? 'none elected yet' : `last epoch ${e.lastEpoch}`;
}

/** The live instances as a table: ACQUIRER, GROUP, INSTANCE, AGE, VERSION, LEADS. */
export function participantTable(participants: readonly ParticipantStatus[]): string {
  return participants.length
    ? renderTable(
        ['ACQUIRER', 'GROUP', 'INSTANCE', 'AGE', 'VERSION', 'LEADS'],
        participants.map((p) => [p.acquirer, p.group, p.instance, formatAge(p.ageMs), p.version, p.leads.join(',')]),
      )
    : 'no live instance announces itself (membership off everywhere, none running, or presence kept on another store: point --backend at it)';
}

/** The elections as a table: ELECTION, LEADER, GROUP, EPOCH, LEASE LEFT (and why nobody leads, in LEADER). */
export function electionTable(elections: readonly ElectionStatus[]): string {
  return elections.length
    ? renderTable(
        ['ELECTION', 'LEADER', 'GROUP', 'EPOCH', 'LEASE LEFT'],
        elections.map((e) =>
          e.leader
            ? [e.name, e.leader.acquirer, e.leader.group, e.epoch ?? '', formatAge(e.leaseLeftMs ?? 0)]
            : [e.name, `(none: ${vacancy(e)})`, '', '', ''],
        ),
      )
    : 'no elections';
}

/** `status` for people: the participants (and how fresh that list is), then the elections. */
export function statusText(overview: ClusterOverview): string {
  const n = overview.participants.length;
  const fresh = overview.viewAgeMs === null ? 'presence could not be read' : overview.viewAgeMs === 0 ? 'read just now' : `view ${formatAge(overview.viewAgeMs)} old`;
  return [
    `participants: ${n} live (${fresh})`,
    participantTable(overview.participants),
    '',
    `elections: ${overview.elections.length}`,
    electionTable(overview.elections),
  ].join('\n');
}

/** `leader` for people: who leads, since when, with which epoch and lease left; or why nobody does. */
export function leaderText(e: ElectionStatus): string {
  const d = e.definition;
  const definition = d
    ? `lease ${formatDuration(d.leaseMs)}, group pattern ${d.groupPattern}, acquirer pattern ${d.acquirerPattern}${d.paused ? ', paused' : ''}`
    : 'no definition (removed)';
  const head = e.leader
    ? `leader of "${e.name}": ${e.leader.acquirer} (group ${e.leader.group}, instance ${e.leader.instance}), epoch ${e.epoch}, ` +
      `elected ${new Date(e.since ?? 0).toISOString()}, lease left ${formatAge(e.leaseLeftMs ?? 0)}`
    : `nobody leads "${e.name}" now (${vacancy(e)})`;
  return `${head}\n${definition}`;
}

/** `resign` for people: who stepped down and how to see who took over; or that nobody led. */
export function resignText(r: ResignResult): string {
  if (!r.resigned || !r.leader) return `nobody leads "${r.election}" now: nothing to resign`;
  return (
    `${r.leader.acquirer} (instance ${r.leader.instance}) resigned "${r.election}" at epoch ${r.epoch}: it is told, stops its leader work ` +
    `and lets go; another node takes over with a higher epoch (see: ${CLI_NAME} leader ${r.election})`
  );
}

/** What the store the CLI was pointed at says of moves between stores (`store move`), one line each; '' for none. */
export function movesText(moves: readonly StoreMoveMark[]): string {
  if (moves.length === 0) return '';
  // Permits, schedules and tasks refuse an operator's edit aimed at a left store (SemaphoreEdits, CliStores.editing).
  const refused = new Set(['permits', 'schedules', 'tasks']);
  const lines = moves.map((m) => m.state === 'left'
    ? `  ${m.capability}: moved to the ${m.other} store on ${new Date(m.at).toISOString()}; ${refused.has(m.capability) ? 'edits of it here are refused' : `the nodes write it there (--backend ${m.other})`}`
    : `  ${m.capability}: arriving from the ${m.other} store since ${new Date(m.at).toISOString()}; held until \`store move --finish\``);
  return `This store, in a move between stores:\n${lines.join('\n')}\n\n`;
}
