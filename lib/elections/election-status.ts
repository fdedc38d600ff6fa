/*
 * The operator's picture of the cluster (admin API `GET <prefix>/cluster`, CLI `status`/`leader`): who is here and
 * who leads each election. Pure: built from what was read (presence, the semaphores' status) and a `now` passed in,
 * so the Nest controller and the CLI show the same thing.
 */
import type { Permit } from '../permits/permit';
import type { SemaphoreStatus } from '../permits/semaphore-status';
import { electionOf } from './election';
import type { Presence } from '../presence/presence';

/** Who leads an election, as the operator's tools show it. */
export interface ElectionLeader {
  /** The leading instance's id. */
  readonly instance: string;
  /** Its acquirer name. */
  readonly acquirer: string;
  /** Its group. */
  readonly group: string;
}

/** An election's definition as operators read it (the one-permit semaphore `election:<name>`). */
export interface ElectionDefinitionStatus {
  /** How long leadership lasts unless renewed, in ms. */
  readonly leaseMs: number;
  /** Regex (full match) a node's group must match to stand. */
  readonly groupPattern: string;
  /** Regex (full match) a node's acquirer name must match to stand. */
  readonly acquirerPattern: string;
  /** Whether it is paused (permits 0): nobody is elected until it is resumed. */
  readonly paused: boolean;
}

/** One election in the cluster, as operators see it. */
export interface ElectionStatus {
  /** The election's name (`'leader'` unless an app runs several). */
  readonly name: string;
  /** The semaphore that backs it: `election:<name>`. */
  readonly semaphore: string;
  /** The leader, or `undefined` while nobody leads (none elected yet, paused, or the last one stepping down). */
  readonly leader: ElectionLeader | undefined;
  /** The leader's epoch (its fencing token), or `undefined` while nobody leads. */
  readonly epoch: number | undefined;
  /** When the leader was elected (epoch ms, granting node's clock), or `undefined` while nobody leads. */
  readonly since: number | undefined;
  /** How long the leader's lease holds unless renewed, in ms (`undefined` while nobody leads). */
  readonly leaseLeftMs: number | undefined;
  /** The highest epoch ever granted (`undefined` if nobody was ever elected): the next leader's epoch is higher. */
  readonly lastEpoch: number | undefined;
  /**
   * Set while the last leader was told to step down (resigned by an operator, revoked) and has not let go yet: its
   * epoch. Nobody else is elected before it lets go or its lease lapses.
   */
  readonly steppingDown: number | undefined;
  /** Its definition, or `undefined` if the definition was removed (the entry stays, so epochs never go back). */
  readonly definition: ElectionDefinitionStatus | undefined;
}

/** One live app instance, as operators see it. */
export interface ParticipantStatus {
  /** The instance's id (unique per process). */
  readonly instance: string;
  /** Its acquirer name. */
  readonly acquirer: string;
  /** Its group. */
  readonly group: string;
  /** The library version it runs. */
  readonly version: string;
  /** Where its HTTP server answers, if it said. */
  readonly httpAddress: string | undefined;
  /** When it started (epoch ms, its own clock). */
  readonly startedAt: number;
  /** How long it has been running, in ms (`now` minus `startedAt`, so within the clock-skew bound). */
  readonly ageMs: number;
  /** The elections it leads now, by name. */
  readonly leads: string[];
}

/** The answer of `GET <prefix>/cluster` and of the CLI's `status --json`. */
export interface ClusterOverview {
  /** When this picture was taken (epoch ms, the reader's clock). */
  readonly at: number;
  /**
   * How old the list of participants may be, in ms: how long ago the cluster last confirmed it (a node's
   * event-fed view), `0` for a fresh read (the CLI), `null` when it is not known (membership off, or not yet read).
   */
  readonly viewAgeMs: number | null;
  /** The live app instances, oldest first (empty with membership off everywhere). */
  readonly participants: ParticipantStatus[];
  /** Every election in the cluster, by name (read from the cluster at `at`, not from a view). */
  readonly elections: ElectionStatus[];
}

/** The leader's permit of an election's semaphore at `now`: live, not revoked, not released. */
function leaderPermit(status: SemaphoreStatus, now: number): Permit | undefined {
  return status.permits.find((p) => p.expiresAt > now && p.revokedAt === undefined && !p.released);
}

/** The status of one election from its semaphore's status (`semaphore` must be `election:<name>`). */
export function electionStatusOf(status: SemaphoreStatus, now: number): ElectionStatus {
  const name = electionOf(status.name) ?? status.name;
  const permit = leaderPermit(status, now);
  const stepping = status.permits.find((p) => p.expiresAt > now && (p.revokedAt !== undefined || p.released));
  const d = status.definition;
  return {
    name,
    semaphore: status.name,
    leader: permit && { instance: permit.instance, acquirer: permit.acquirer, group: permit.group },
    epoch: permit?.fencingToken,
    since: permit?.grantedAt,
    leaseLeftMs: permit && permit.expiresAt - now,
    lastEpoch: status.lastToken,
    steppingDown: permit ? undefined : stepping?.fencingToken,
    definition: d && { leaseMs: d.durationMs, groupPattern: d.groupPattern, acquirerPattern: d.acquirerPattern, paused: d.permits === 0 },
  };
}

/**
 * Every election among `statuses` (the `election:*` semaphores), by name. One whose definition was removed and
 * that nobody holds any more is left out: it is gone for operators, though its entry keeps its last epoch.
 */
export function electionStatuses(statuses: readonly SemaphoreStatus[], now: number): ElectionStatus[] {
  return statuses
    .filter((s) => electionOf(s.name) !== undefined && (s.definition !== undefined || s.permits.some((p) => p.expiresAt > now)))
    .map((s) => electionStatusOf(s, now))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The election `name` among `statuses`, or `undefined` if the cluster has no such election (see {@link electionStatuses}). */
export function findElection(statuses: readonly SemaphoreStatus[], name: string, now: number): ElectionStatus | undefined {
  return electionStatuses(statuses, now).find((e) => e.name === name);
}

/** The live instances as operators see them, in the order given (presence lists them oldest first). */
export function participantStatuses(participants: readonly Presence[], elections: readonly ElectionStatus[], now: number): ParticipantStatus[] {
  return participants.map((p) => ({
    instance: p.instance,
    acquirer: p.acquirer,
    group: p.group,
    version: p.version,
    httpAddress: p.httpAddress,
    startedAt: p.startedAt,
    ageMs: Math.max(0, now - p.startedAt),
    leads: elections.filter((e) => e.leader?.instance === p.instance).map((e) => e.name),
  }));
}

/** The whole picture: participants (with how old that list may be) and every election, at `now`. */
export function clusterOverview(
  { participants, viewAgeMs, semaphores }: { participants: readonly Presence[]; viewAgeMs: number | undefined; semaphores: readonly SemaphoreStatus[] },
  now: number,
): ClusterOverview {
  const elections = electionStatuses(semaphores, now);
  return { at: now, viewAgeMs: viewAgeMs ?? null, participants: participantStatuses(participants, elections, now), elections };
}
