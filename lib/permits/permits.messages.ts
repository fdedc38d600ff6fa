import { formatDuration } from '../core/duration';
import type { Holder, Permit } from './permit';
import type { DefinitionDrift } from './definition-drift.rules';
import { formatStateLine } from './state-dump.format';

/** The stores a recovery wait names, by backend kind. */
/** `text` as one word of a POSIX shell command line: as it is when plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w.:@%+=,/-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** The CLI's `set` option of each setting a definition has. */
const CLI_OPTIONS: Readonly<Record<DefinitionDrift['field'], string>> = { permits: '--permits', duration: '--duration', groupPattern: '--group-pattern', acquirerPattern: '--acquirer-pattern' };
const STORE_NAMES: Readonly<Record<string, string>> = { redis: 'Redis store', postgres: 'PostgreSQL database', memory: 'in-memory store' };

/** How a line starts that names the permits' store: the cluster, the database, the server (`undefined`: a store of the user's). */
const storeTitle = (backend: string | undefined): string =>
  ({ hazelcast: 'Cluster', postgres: 'PostgreSQL', redis: 'Redis' } as Record<string, string>)[backend ?? ''] ?? 'Store';

const tokenOf = (permit: Permit) => `${permit.semaphore} (fencing token ${permit.fencingToken})`;

/**
 * The permits' log texts, in one place: the store's health as decisions reveal it, start-up's checks of the
 * definitions and the decorated methods, recoveries, releases. `backend` is the permits' backend kind (`undefined`:
 * a permit store of the user's).
 */
export const permitMessages = {
  unavailable: (detail: string, backend?: string) =>
    `${storeTitle(backend)} unreachable: denying every permit until it is back (fail closed). ${detail}`,
  available: (backend?: string) => `${storeTitle(backend)} reachable again: permits are granted as usual`,
  corruptValue: (key: string, reason: string) =>
    `Ignoring unreadable value under "${key}" (${reason}); repair it with SemaphoreAdminService.resetPermits() or putDefinition()`,
  /** A semaphore waits out a recovery; what lifts it depends on the permits' backend. */
  recovering: (semaphore: string, until: string, backend: string | undefined) =>
    backend === 'hazelcast'
      ? `"${semaphore}" waits until ${until}: the cluster looks new or restarted (RECOVERING), and one that lost its data ` +
        'cannot be told from a brand-new one, so no permit is granted before every permit the lost data could hold has ' +
        'lapsed. If this cluster is brand new (it never held gatekeeper data), run once: npx nestjs-gatekeeper store init'
      : `"${semaphore}" waits until ${until}: the ${STORE_NAMES[backend ?? ''] ?? 'store'} may have lost its data (RECOVERING; ` +
        'the line logged when a node found it says why: an ERROR for a loss, a WARN for a restart that kept what that node saw), so no permit is granted before every permit the lost data ' +
        'could hold has lapsed. This is the library\'s own recovery wait: jobs on it are held back until then, and nothing ' +
        'needs doing' + (backend === 'redis' ? ' (a new deployment is declared new before its first node starts: npx nestjs-gatekeeper --backend redis store init)' : ''),
  recovered: (name: string, backend?: string) =>
    `The entry of "${name}" was lost with the ${backend === 'hazelcast' ? 'cluster' : STORE_NAMES[backend ?? ''] ?? 'store'}'s data (or the store restarted): this node put its definition back; nothing is granted until every permit the lost entry could hold has lapsed`,
  recoveryFailed: (name: string, error: unknown) => `Could not put back the lost definition of "${name}": ${(error as Error).message ?? String(error)}`,
  nameClash: (acquirer: string, instance: string, semaphore: string) =>
    `Another running instance (${instance}) uses this node's acquirer name "${acquirer}" (seen holding "${semaphore}"): ` +
    'permits belong to instances, so both work, but logs and acquirer patterns cannot tell them apart; give each process its own name',
  autoDefined: (name: string, where: string, durationMs: number) =>
    `Auto-defined semaphore "${name}" for ${where} (1 permit, any group, any acquirer, ${durationMs} ms)`,
  missingDuration: (where: string) =>
    'needs a duration to auto-define its semaphore: give @ClusterSingleton(name, duration) or add a definition (used by ' + where + ')',
  definitionInForce: (name: string, where: string, codeMs: number, storedMs: number) =>
    `${where} runs with the duration semaphore "${name}" has in the cluster, ${formatDuration(storedMs)}, ` +
    `not @ClusterSingleton's ${formatDuration(codeMs)}: a definition that exists wins over the decorator (a live edit, ` +
    'the module\'s definitions, or the version that defined it first). Change it with the console, the admin API or ' +
    `\`nestjs-gatekeeper set ${name} --duration <duration>\`, or give it in the module's definitions with definitionsPolicy: 'overwrite'`,
  moduleDefinitionNotApplied: (name: string, drift: readonly DefinitionDrift[], paused: boolean, backend?: string) => {
    const shown = (d: DefinitionDrift, side: 'code' | 'stored') => (d.field === 'duration' ? formatDuration(Number(d[side])) : d.field === 'permits' ? String(d[side]) : JSON.stringify(d[side]));
    const options = drift.map((d) => `${CLI_OPTIONS[d.field]} ${d.field === 'duration' ? formatDuration(Number(d.code)) : d.field === 'permits' ? d.code : shellWord(String(d.code))}`);
    const cli = `npx nestjs-gatekeeper${backend === 'postgres' || backend === 'redis' ? ` --backend ${backend}` : ''} set ${shellWord(name)} ${options.join(' ')}`;
    return `Semaphore "${name}" in the module's definitions differs from the one the cluster keeps, which stays in force ` +
      `(definitionsPolicy: 'keep'): ${drift.map((d) => `${d.field} ${shown(d, 'code')} in the module, ${shown(d, 'stored')} in the cluster`).join('; ')}` +
      `${paused ? ' (it is paused there; a resume restores the permits shown)' : ''}. Apply the module's with the console, the admin API or \`${cli}\`, ` +
      "or set definitionsPolicy: 'overwrite' (the module's definitions then replace the stored ones at every start, live edits included); " +
      "if the cluster's is the one meant (a live edit), give the module the same values";
  },
  sharedDurationInForce: (name: string, where: string, first: string, codeMs: number, storedMs: number) =>
    `${where} runs with the duration semaphore "${name}" was defined with by ${first}, ${formatDuration(storedMs)}, not ` +
    `its own @ClusterSingleton's ${formatDuration(codeMs)}: methods that share a semaphore share its duration. Give them ` +
    `the same duration, a semaphore each, or "${name}" a definition in the module's definitions`,
  durationBelowSkew: (name: string, durationMs: number, skewMs: number) =>
    `Semaphore "${name}" lasts ${durationMs} ms, not more than twice maxClockSkew (${skewMs} ms): a running job's ` +
    'lease can vouch for its permit only briefly or not at all; lengthen the duration or lower maxClockSkew',
  durationBelowTick: (name: string, durationMs: number, job: string, tickMs: number) =>
    `Semaphore "${name}" now lasts ${formatDuration(durationMs)}, shorter than the tick of ${job} here (every ${formatDuration(tickMs)}), ` +
    'which keeps its permit from tick to tick: the permit lapses between ticks and the job moves between nodes. Give it a duration ' +
    'longer than the tick',
  lockAtLeastForTooLong: (where: string, lockAtLeastForMs: number, skewMs: number, intervalMs: number) =>
    `${where}: lockAtLeastFor (${lockAtLeastForMs} ms) plus maxClockSkew (${skewMs} ms) reaches the interval between ticks ` +
    `(${intervalMs} ms): the next tick finds the permit still kept and is skipped everywhere; lower lockAtLeastFor`,
  neverRunsHere: (where: string, semaphore: string, holder: Holder, reason: string) =>
    `${where} can never run on this node (group "${holder.group}", acquirer "${holder.acquirer}"): semaphore "${semaphore}": ` +
    `${reason}. Set this node's identity, or edit the definition, if it should`,
  runsNowhere: (semaphore: string, definition: { groupPattern: string; acquirerPattern: string }, live: string, count: number) =>
    `"${semaphore}" runs nowhere: its groupPattern "${definition.groupPattern}" and acquirerPattern "${definition.acquirerPattern}" ` +
    `admit none of the ${count} live instance(s) (${live}). Edit the definition or start a node it admits`,
  releaseFailed: (semaphore: string, error: unknown) =>
    `Could not release "${semaphore}"; it will expire on its own: ${(error as Error).message ?? String(error)}`,
  shutdownRunning: (count: number) =>
    `${count} job(s) still running after the shutdown timeout keep their permits until they expire`,
  releasedAtShutdown: (released: Permit[], kept: Permit[]) =>
    [
      released.length > 0 ? `Released ${released.length} permit(s) at shutdown: ${released.map(tokenOf).join(', ')}` : '',
      kept.length > 0 ? `kept ${kept.length} of a job still running until it expires: ${kept.map(tokenOf).join(', ')}` : '',
    ].filter(Boolean).join('; '),
  stateLine: formatStateLine,
} as const;
