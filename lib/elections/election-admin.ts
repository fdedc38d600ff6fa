/*
 * Operator actions on elections, shared by the admin HTTP API and the CLI: read an election from the cluster, and
 * make its leader resign from any node. Framework-free: both run over a SemaphoreAdmin, the same tool that edits
 * permits, since an election is the one-permit semaphore `election:<name>`.
 */
import type { Clock } from '../core/clock';
import { nameProblem } from '../core/names';
import type { SemaphoreAdmin } from '../permits/semaphore-admin';
import { MAX_ELECTION_NAME_LENGTH } from './election';
import { electionStatuses, findElection, type ElectionLeader, type ElectionStatus } from './election-status';
import { invalidDefinition } from '../core/errors/input.errors';
import { electionNotFound } from './errors/election.errors';

/** What election tools need of the permit layer: the cluster's semaphores, and revoking one permit. */
export type ElectionAdminPort = Pick<SemaphoreAdmin, 'permits' | 'forceRelease'>;

/** What {@link resignLeader} did. */
export interface ResignResult {
  /** The election. */
  readonly election: string;
  /** Whether a leader was told to step down; `false` when nobody led (or the leader seen lost its lease meanwhile). */
  readonly resigned: boolean;
  /** The epoch that ended, when a leader resigned; the next leader's epoch is higher. */
  readonly epoch?: number;
  /** Who resigned. */
  readonly leader?: ElectionLeader;
}

/**
 * Checks an election name as operators type it: a name (lib/core/names) short enough for its semaphore
 * (`election:<name>`). Throws {@link InvalidInputError} naming the field `election`.
 */
export function validateElectionName(name: unknown): string {
  const problem = nameProblem(name, { max: MAX_ELECTION_NAME_LENGTH, what: 'a non-empty name' });
  if (problem !== undefined) throw invalidDefinition('<election>', 'election', problem);
  return name as string;
}

/**
 * The election `name` as the cluster has it now (one round trip): its leader, epoch, lease left and definition.
 * Throws {@link NotFoundError} (naming the election and those that exist) if there is no such election.
 */
export async function readElection(admin: ElectionAdminPort, name: string, clock: Clock): Promise<ElectionStatus> {
  validateElectionName(name);
  const statuses = await admin.permits();
  const now = clock.now();
  const found = findElection(statuses, name, now);
  if (!found) throw electionNotFound(name, electionStatuses(statuses, now).map((e) => e.name));
  return found;
}

/**
 * Makes the current leader of `name` step down, from any node: its permit is revoked by its epoch, so it is told,
 * stops its leader work and lets go, and stands back one renewal so another node takes over (a single node is
 * re-elected with a higher epoch). Only the leader that was read is revoked: one elected meanwhile is left alone.
 * Throws {@link NotFoundError} if there is no such election.
 */
export async function resignLeader(admin: ElectionAdminPort, name: string, clock: Clock): Promise<ResignResult> {
  const election = await readElection(admin, name, clock);
  if (!election.leader || election.epoch === undefined) return { election: name, resigned: false };
  if (!(await admin.forceRelease(election.semaphore, election.epoch))) return { election: name, resigned: false };
  return { election: name, resigned: true, epoch: election.epoch, leader: election.leader };
}
