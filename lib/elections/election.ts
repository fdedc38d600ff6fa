import { ELECTION_SEMAPHORE_PREFIX, validateDefinition } from '../permits/definition.validator';
import type { DurationInput } from '../core/duration';
import { MAX_SEMAPHORE_NAME_LENGTH, type SemaphoreDefinition } from '../permits/semaphore-definition';

/** The election `@LeaderOnly()`, `ClusterService.isLeader()` and the others use when none is named. */
export const DEFAULT_ELECTION = 'leader';

/** The lease of an election that does not set one: a crashed leader is replaced 10-12 s later (10 s + skew + a retry). */
export const DEFAULT_ELECTION_LEASE = '10s';

/**
 * An election as users declare it (module option `elections`). It is stored as a one-permit semaphore named
 * `election:<name>`, so operators pause, edit and migrate leadership with the tools they use for permits.
 */
export interface ElectionInput {
  /** The election's name: `'leader'` unless you run several. */
  name: string;
  /**
   * How long leadership lasts unless renewed; the leader renews it every third of it. A crashed leader is replaced
   * within this plus twice the clock-skew bound plus one retry. Default `'10s'`.
   */
  lease?: DurationInput;
  /** Regex (full match) a node's group must match to stand, e.g. `'production'`. Default any group. */
  groupPattern?: string;
  /** Regex (full match) a node's acquirer name must match to stand. Default any acquirer. */
  acquirerPattern?: string;
}

/** The current leader of an election, as a node's view has it. */
export interface Leader {
  /** The election. */
  readonly election: string;
  /** The leading instance's id. */
  readonly instance: string;
  /** Its acquirer name. */
  readonly acquirer: string;
  /** Its group. */
  readonly group: string;
  /** The fencing token of this leadership: grows with every new leader, so writes can be fenced by it. */
  readonly epoch: number;
  /** When it was elected (epoch ms, granting node's clock). */
  readonly since: number;
  /** Until when its lease holds unless renewed (epoch ms, granting node's clock). */
  readonly expiresAt: number;
}

/** The most characters of an election's name: its semaphore's (`election:<name>`) must fit. */
export const MAX_ELECTION_NAME_LENGTH = MAX_SEMAPHORE_NAME_LENGTH - ELECTION_SEMAPHORE_PREFIX.length;

/** The semaphore that backs the election `name`. */
export function electionSemaphore(name: string): string {
  return `${ELECTION_SEMAPHORE_PREFIX}${name}`;
}

/** The one-permit semaphore definition that backs an election (validated, naming the election's semaphore). */
export function electionDefinition(input: ElectionInput): SemaphoreDefinition {
  return validateDefinition({
    name: electionSemaphore(input.name),
    permits: 1,
    duration: input.lease ?? DEFAULT_ELECTION_LEASE,
    ...(input.groupPattern !== undefined && { groupPattern: input.groupPattern }),
    ...(input.acquirerPattern !== undefined && { acquirerPattern: input.acquirerPattern }),
  });
}

/** The election a semaphore backs, or `undefined` for an ordinary semaphore. */
export function electionOf(semaphore: string): string | undefined {
  return semaphore.startsWith(ELECTION_SEMAPHORE_PREFIX) ? semaphore.slice(ELECTION_SEMAPHORE_PREFIX.length) : undefined;
}
