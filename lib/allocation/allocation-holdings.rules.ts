import { compareCodePoints as compare } from '../core/code-point-order';
import type { Holder, Permit } from '../permits/permit';
import { livePermits } from '../permits/permit.rules';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import { readAnnex } from './allocation-annex.codec';
import { ownersOf, participantsOf } from './allocation-slots.rules';
import { retryIntervalMs } from '../core/lease.rules';

/*
 * What a node holds and may take (pure): following the plan, the write that claims or gives up resources, and when
 * to look again. A resource is given to a permit only in a write that finds no other live permit listing it.
 */

/** What one node should do now to follow the plan. */
export interface Reconciliation {
  /** Resources it holds that the plan no longer gives it: to revoke (its `onRevoked`), then give up. */
  readonly revoke: string[];
  /** Resources the plan gives it that nobody else holds: to claim. */
  readonly claim: string[];
  /** Resources the plan gives it that another node still holds (it has to give them up, or lapse, first). */
  readonly blocked: string[];
  /** What it holds now, by its permit. */
  readonly held: string[];
}

/**
 * What the node with permit `token` should do to follow the plan in `entry`: it holds what the plan gives its
 * acquirer name only if it is that name's member (the oldest instance taking part under it); a node that does not
 * take part (revoked, excluded, over capacity, released) or a younger instance under a taken name holds nothing.
 */
export function reconcile(entry: SemaphoreEntry | undefined, self: Holder, token: number, now: number, skewMs: number): Reconciliation {
  const mine = livePermits(entry?.permits ?? [], now - skewMs).find((p) => p.fencingToken === token && p.instance === self.instance);
  const held = Object.keys(mine?.resources ?? {}).sort(compare);
  const annex = readAnnex(entry?.annex);
  const { plan } = annex;
  const member = participantsOf(entry, now, skewMs).find((p) => p.acquirer === self.acquirer);
  const mineToFollow = mine && member?.fencingToken === token;
  // An unreadable plan (malformed, or a newer version's): hold what you have until the coordinator writes one.
  const target = new Set(!mineToFollow ? [] : annex.unreadablePlan ? held : plan ? (plan.targets[self.acquirer] ?? []) : []);
  const owners = ownersOf(entry, now, skewMs);
  const wanted = [...target].filter((id) => !(id in (mine?.resources ?? {}))).sort(compare);
  const free = (id: string) => claimable(owners.get(id), self, token);
  return {
    revoke: held.filter((id) => !target.has(id)),
    claim: wanted.filter(free),
    blocked: wanted.filter((id) => !free(id)),
    held,
  };
}

/** What {@link amendHoldings} did. */
export interface HoldingsChange {
  /** The permits to write. */
  readonly permits: Permit[];
  /** Resources given to this permit, at the write's revision. */
  readonly claimed: string[];
  /** Resources this permit gave up. */
  readonly released: string[];
  /** Resources asked for that another live permit still lists: not given. */
  readonly blocked: string[];
}

/**
 * The permits after this node's permit `token` gives up `release` and takes `claim` (each at `revision`, the
 * write's, as its epoch). A resource is taken only if no other live permit lists it, or only a reservation of the
 * same acquirer name (this node's earlier instance, stopped gracefully), which then drops it. `permits` are the
 * live permits as the write will have them.
 */
export function amendHoldings(
  permits: readonly Permit[],
  self: Holder,
  token: number,
  { claim = [], release = [] }: { claim?: readonly string[]; release?: readonly string[] },
  revision: number,
): HoldingsChange {
  const mine = permits.find((p) => p.fencingToken === token && p.instance === self.instance);
  if (!mine) return { permits: [...permits], claimed: [], released: [], blocked: [...claim] };
  const owners = new Map<string, Permit>();
  for (const p of permits) for (const id of Object.keys(p.resources ?? {})) owners.set(id, p);
  const resources: Record<string, number> = { ...mine.resources };
  const released = release.filter((id) => id in resources);
  for (const id of released) delete resources[id];
  const claimed: string[] = [];
  const blocked: string[] = [];
  const inherited = new Map<number, Set<string>>();
  for (const id of new Set(claim)) {
    if (id in resources) continue;
    const owner = owners.get(id);
    if (!claimable(owner, self, token)) {
      blocked.push(id);
      continue;
    }
    if (owner && owner.fencingToken !== token) inherited.set(owner.fencingToken, (inherited.get(owner.fencingToken) ?? new Set()).add(id));
    resources[id] = revision;
    claimed.push(id);
  }
  const next = permits.map((p) => {
    if (p === mine) return withResources(p, resources);
    const gone = inherited.get(p.fencingToken);
    if (!gone) return p;
    const left = { ...p.resources };
    for (const id of gone) delete left[id];
    return withResources(p, left);
  });
  return { permits: next, claimed, released, blocked };
}

/** Whether a resource listed by `owner` (or by nobody) may be given to this node's permit `token`. */
function claimable(owner: Permit | undefined, self: Holder, token: number): boolean {
  if (!owner || owner.fencingToken === token) return true;
  return owner.released === true && owner.acquirer === self.acquirer;
}

function withResources(permit: Permit, resources: Record<string, number>): Permit {
  const { resources: _dropped, ...rest } = permit;
  return Object.keys(resources).length > 0 ? { ...rest, resources } : rest;
}

/** The lease assumed while the view does not know the allocation's definition yet. */
const UNKNOWN_LEASE_MS = 10_000;

/**
 * How long a participant waits before it looks at the allocation again when no event wakes it: a renewal interval
 * at most (heard nothing for a lease, it looks anyway), until the plan changes by itself (`wakeAt`), until right
 * after the next lapse of a permit (a silent node's resources are free then, with no event), and until right after
 * it stops standing back (`standingBackMs`, 0 when it is not). Never under 10 ms.
 */
export function nextLookInMs(entry: SemaphoreEntry | undefined, now: number, skewMs: number, wakeAt: number | undefined, standingBackMs: number): number {
  let next = retryIntervalMs(entry?.definition?.durationMs ?? UNKNOWN_LEASE_MS);
  if (wakeAt !== undefined) next = Math.min(next, wakeAt - now + 1);
  const lapses = (entry?.permits ?? []).map((p) => p.expiresAt + skewMs - now).filter((ms) => ms >= 0);
  if (lapses.length) next = Math.min(next, Math.min(...lapses) + 1);
  if (standingBackMs > 0) next = Math.min(next, standingBackMs + 1);
  return Math.max(10, next);
}
