/*
 * What a semaphore is for, read from its name: leader elections and allocations keep their state in semaphores
 * named `election:<name>` and `allocation:<name>`, and every other semaphore is a job. The kind is derived, never
 * stored: every entry any version wrote reads with the same kind, and a version that does not know the kind can
 * rewrite an entry without losing it. The names were already read this way (status, `allocations`, the permits
 * cap of an election), so a job could never use them.
 *
 * Operator tools treat jobs and the others apart: an election's or allocation's permits mean something else (0
 * or 1: whether the election runs; how many nodes take part in an allocation), so changing them through the tools
 * for jobs, pausing included, needs `force`, and group migrations, which move jobs, leave them out.
 */
import { ELECTION_SEMAPHORE_PREFIX } from './definition.validator';
import { invalidDefinition } from '../core/errors/input.errors';

/**
 * Names that start with this back allocations: the semaphore `allocation:<name>` holds one permit per node taking
 * part, and each permit lists the resources its node owns.
 */
export const ALLOCATION_SEMAPHORE_PREFIX = 'allocation:';

/** What a semaphore is for: a job's (`@ClusterSingleton`, `withPermit`), a leader election's or an allocation's. */
export type SemaphoreKind = 'job' | 'election' | 'allocation';

/** The kind of the semaphore `name`: `election` for `election:<name>`, `allocation` for `allocation:<name>`, else `job`. */
export function semaphoreKind(name: string): SemaphoreKind {
  if (name.startsWith(ELECTION_SEMAPHORE_PREFIX)) return 'election';
  if (name.startsWith(ALLOCATION_SEMAPHORE_PREFIX)) return 'allocation';
  return 'job';
}

/** An operator's edit of a definition (admin, service, CLI). */
export interface KindGuardOptions {
  /**
   * Allow an edit that changes the permits of an election's or an allocation's semaphore (a pause or resume
   * included), or creates one by hand, or gives a duration not more than twice `maxClockSkew`. Without it such an
   * edit is refused with {@link InvalidInputError} naming the semaphore and the field: their permits are not a
   * job's, and so short a lease can hardly vouch for a run. Default `false`.
   */
  readonly force?: boolean;
}

/** What an edit does to the permits of a semaphore that is not a job's, for the refusal to say. */
export type InternalPermitsEdit = 'pause' | 'resume' | 'permits' | 'create';

/**
 * Refuses, unless forced, an edit that would change the permits of an election's or allocation's semaphore (or
 * create one by hand): `current` is the stored definition's permits (`undefined`: there is none), `next` the
 * edit's. Jobs, and edits that leave the permits as they are (a group pattern, a lease), always pass.
 */
export function checkKindEdit(name: string, edit: InternalPermitsEdit, current: number | undefined, next: number, { force = false }: KindGuardOptions = {}): void {
  const kind = semaphoreKind(name);
  if (kind === 'job' || force || (current !== undefined && current === next)) return;
  throw invalidDefinition(name, current === undefined ? 'name' : 'permits', internalRefusal(name, kind, current === undefined ? 'create' : edit));
}

/** Why group migrations leave `name` (an election's or allocation's semaphore) out, and how to move it instead. */
export function migrationRefusal(name: string, kind: Exclude<SemaphoreKind, 'job'>, groups = '<groups>'): string {
  return `${backs(name, kind)}: group migrations move jobs only; to move it, edit its group pattern (nestjs-gatekeeper set ${name} --group-pattern '${groups}')`;
}

function backs(name: string, kind: Exclude<SemaphoreKind, 'job'>): string {
  const prefix = kind === 'election' ? ELECTION_SEMAPHORE_PREFIX : ALLOCATION_SEMAPHORE_PREFIX;
  return `it backs the ${kind === 'election' ? 'leader election' : 'allocation'} "${name.slice(prefix.length)}", not a job`;
}

function internalRefusal(name: string, kind: 'election' | 'allocation', edit: InternalPermitsEdit): string {
  const election = kind === 'election';
  const force = 'force it (CLI --force, admin API ?force=true, service { force: true })';
  if (edit === 'create') {
    return `${backs(name, kind)}: it is defined when a node ${election ? 'stands in the election' : 'takes part'} ` +
      `(module option ${election ? 'elections' : 'allocations'}). To define it by hand anyway, ${force}`;
  }
  const meaning = election ? 'its permits say whether the election runs (0 or 1)' : 'its permits are how many nodes may take part';
  const effect: Record<Exclude<InternalPermitsEdit, 'create'>, string> = {
    pause: election ? 'pausing it makes the leader step down and elects nobody until resumed' : 'pausing it makes every node give up its resources until resumed',
    resume: election ? 'resuming it lets a leader be elected again' : 'resuming it lets nodes take part again',
    permits: election ? 'setting them starts or stops the election' : 'fewer turn the other nodes into standbys, their resources moved',
  };
  return `${backs(name, kind)}: ${meaning}, and ${effect[edit]}. To do it anyway, ${force}`;
}
