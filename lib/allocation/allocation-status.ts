import type { SemaphoreDefinition } from '../permits/semaphore-definition';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import { livePermits } from '../permits/permit.rules';
import { allocationOf, type AllocationPlan } from './allocation';
import { readAnnex } from './allocation-annex.codec';
import { participantsOf } from './allocation-slots.rules';

/** One node's part in an allocation, as the cluster has it. */
export interface AllocationOwner {
  /** The node's acquirer name. */
  readonly acquirer: string;
  /** Its group. */
  readonly group: string;
  /** Its instance id. */
  readonly instance: string;
  /** The fencing token of its part. */
  readonly token: number;
  /** Whether it takes part (false: stepping out, revoked, excluded by an edit, or a graceful leaver's reservation). */
  readonly participating: boolean;
  /** Whether this is a reservation: the node stopped gracefully and its resources wait for its name. */
  readonly reserved: boolean;
  /** The resources it owns (or reserves), sorted. */
  readonly resources: string[];
  /** Until when its lease holds unless renewed (epoch ms). */
  readonly expiresAt: number;
}

/** An allocation as the cluster has it: who owns what, how even it is, and the last rebalance. */
export interface AllocationStatus {
  /** The allocation's name. */
  readonly name: string;
  /** Its definition (`permits` is how many nodes may take part), or `undefined` if it is not defined. */
  readonly definition?: SemaphoreDefinition;
  /** Every live part, oldest first. */
  readonly owners: AllocationOwner[];
  /** How many resources the last plan spreads. */
  readonly resources: number;
  /** How many of them nobody owns now (moving, or waiting for a lapsed owner). */
  readonly unowned: number;
  /** Largest minus smallest share among participating nodes (0 or 1 once settled). */
  readonly skew: number;
  /** The last rebalance, if a plan was written. */
  readonly lastRebalance?: Omit<AllocationPlan, 'resources' | 'targets'> & { readonly settled: boolean };
}

/** The status of the allocation backed by `semaphore` at `now`. */
export function allocationStatus(semaphore: string, entry: SemaphoreEntry | undefined, now: number, skewMs: number): AllocationStatus {
  const name = allocationOf(semaphore) ?? semaphore;
  const live = livePermits(entry?.permits ?? [], now - skewMs);
  const participating = new Set(participantsOf(entry, now, skewMs).map((p) => p.fencingToken));
  const owners = live.map((p): AllocationOwner => ({
    acquirer: p.acquirer,
    group: p.group,
    instance: p.instance,
    token: p.fencingToken,
    participating: participating.has(p.fencingToken),
    reserved: p.released === true,
    resources: Object.keys(p.resources ?? {}).sort(),
    expiresAt: p.expiresAt,
  }));
  const plan = readAnnex(entry?.annex).plan;
  const owned = new Set(owners.flatMap((o) => o.resources));
  const shares = owners.filter((o) => o.participating).map((o) => o.resources.length);
  const { resources: planned = [], targets = {}, ...rest } = plan ?? {};
  const members = owners.filter((o, i) => o.participating && owners.findIndex((x) => x.participating && x.acquirer === o.acquirer) === i);
  const settled = plan !== undefined && members.every((o) => sameSet(o.resources, targets[o.acquirer] ?? []));
  return {
    name,
    ...(entry?.definition && { definition: entry.definition }),
    owners,
    resources: planned.length,
    unowned: planned.filter((id) => !owned.has(id)).length,
    skew: shares.length ? Math.max(...shares) - Math.min(...shares) : 0,
    ...(plan && { lastRebalance: { ...(rest as Omit<AllocationPlan, 'resources' | 'targets'>), settled } }),
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}
