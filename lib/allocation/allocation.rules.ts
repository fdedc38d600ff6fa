import { fullMatch } from '../core/pattern';
import { livePermits, type Holder, type Permit } from '../permits/permit';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import type { AllocationPlan, RebalanceReason } from './allocation';
import { readAnnex } from './allocation-annex.codec';

/*
 * The allocation's rules, pure: everything they need is passed in. Who owns a resource is what the permits of the
 * allocation's semaphore say (each lists its resources); the plan in the entry's annex only says where resources
 * should go. Safety rests on the permits alone: a resource is given to a permit only in a write that finds no
 * other live permit listing it, judged with the skew bound like every permit decision.
 */

/** Nodes that take part, under one acquirer name: what a plan gives resources to. */
export interface AllocationSlot {
  /** The acquirer name. */
  readonly name: string;
  /** The oldest taking part under this name (the one that owns its resources), unless only a reservation is left. */
  readonly member?: Permit;
  /** Whether only a reservation holds the slot: its node stopped gracefully and may come back within the delay. */
  readonly reserved: boolean;
  /** Its order: the member's fencing token, or the reservation's. */
  readonly token: number;
  /** Resources its member and its reservations list, with their epochs. */
  readonly holdings: ReadonlyMap<string, number>;
}

/**
 * The permits that take part at `now`: live (by the skew bound), neither released nor revoked, admitted by the
 * definition's patterns and within its permits (the oldest first, as the permit rules count capacity).
 */
export function participantsOf(entry: SemaphoreEntry | undefined, now: number, skewMs: number): Permit[] {
  const def = entry?.definition;
  if (!entry || !def || def.permits === 0) return [];
  const live = livePermits(entry.permits, now - skewMs);
  return live.filter(
    (p, index) =>
      index < def.permits &&
      !p.released &&
      p.revokedAt === undefined &&
      fullMatch(def.groupPattern, p.group) &&
      fullMatch(def.acquirerPattern, p.acquirer),
  );
}

/** The oldest participant: the one that writes plans. */
export function coordinatorOf(entry: SemaphoreEntry | undefined, now: number, skewMs: number): Permit | undefined {
  return participantsOf(entry, now, skewMs)[0];
}

/** Every slot: one per acquirer name taking part, and one per name that only a live reservation still holds. */
export function slotsOf(entry: SemaphoreEntry | undefined, now: number, skewMs: number): AllocationSlot[] {
  if (!entry) return [];
  const live = livePermits(entry.permits, now - skewMs);
  const members = new Map<string, Permit>();
  for (const p of participantsOf(entry, now, skewMs)) if (!members.has(p.acquirer)) members.set(p.acquirer, p);
  const reservations = live.filter((p) => p.released && p.resources && Object.keys(p.resources).length > 0);
  const names = new Set([...members.keys(), ...reservations.map((p) => p.acquirer)]);
  const slots = [...names].map((name): AllocationSlot => {
    const member = members.get(name);
    const own = reservations.filter((p) => p.acquirer === name);
    const holdings = new Map<string, number>();
    for (const p of [...own, ...(member ? [member] : [])]) for (const [id, epoch] of Object.entries(p.resources ?? {})) holdings.set(id, epoch);
    return { name, member, reserved: !member, token: member?.fencingToken ?? own[0].fencingToken, holdings };
  });
  return slots.sort((a, b) => a.token - b.token);
}

/** Which live permit lists each resource (at most one, as claims ensure). */
export function ownersOf(entry: SemaphoreEntry | undefined, now: number, skewMs: number): Map<string, Permit> {
  const owners = new Map<string, Permit>();
  for (const p of livePermits(entry?.permits ?? [], now - skewMs)) for (const id of Object.keys(p.resources ?? {})) owners.set(id, p);
  return owners;
}

/**
 * Spreads `resources` over `slots` evenly and stickily: every slot ends with ⌊R/N⌋ or ⌈R/N⌉; the larger shares go
 * first to slots that already hold that many (then the oldest), each slot keeps what it held up to its share (its
 * oldest resources first), and only the rest moves, so a join moves only as many resources as evenness needs and a
 * leave moves only the leaver's. Returns the targets and how many held resources change slot.
 */
export function evenTargets(
  slots: readonly Pick<AllocationSlot, 'name' | 'token' | 'holdings'>[],
  resources: readonly string[],
): { targets: Record<string, string[]>; moved: number } {
  const set = [...new Set(resources)].sort();
  if (slots.length === 0) return { targets: {}, moved: 0 };
  const inSet = new Set(set);
  const held = new Map(
    slots.map((s) => [
      s.name,
      [...s.holdings].filter(([id]) => inSet.has(id)).sort((a, b) => a[1] - b[1] || compare(a[0], b[0])).map(([id]) => id),
    ]),
  );
  const base = Math.floor(set.length / slots.length);
  const extra = set.length % slots.length;
  const byToken = [...slots].sort((a, b) => a.token - b.token);
  const ranked = [...byToken].sort((a, b) => Number(held.get(a.name)!.length <= base) - Number(held.get(b.name)!.length <= base));
  const share = new Map(ranked.map((s, i) => [s.name, base + (i < extra ? 1 : 0)]));
  const targets: Record<string, string[]> = {};
  const taken = new Set<string>();
  for (const s of byToken) {
    targets[s.name] = held.get(s.name)!.slice(0, share.get(s.name));
    for (const id of targets[s.name]) taken.add(id);
  }
  const pool = set.filter((id) => !taken.has(id));
  for (const s of byToken) targets[s.name].push(...pool.splice(0, share.get(s.name)! - targets[s.name].length));
  let moved = 0;
  for (const s of byToken) {
    const target = new Set(targets[s.name]);
    moved += held.get(s.name)!.filter((id) => !target.has(id)).length;
    targets[s.name].sort(compare);
  }
  return { targets, moved };
}

/** What the coordinator should do about the plan now. */
export interface PlanDecision {
  /** The new plan to write, if one is due. */
  readonly plan?: AllocationPlan;
  /** When to look again even if nothing changes (a joiner's delay ends). */
  readonly wakeAt?: number;
  /** Why no plan is written although something changed: the last plan is still being carried out. */
  readonly waiting?: 'in-flight';
}

/** What {@link decidePlan} needs. */
export interface PlanInput {
  /** The allocation's entry as read. */
  readonly entry: SemaphoreEntry;
  /** The resource set, as the coordinator reads it. */
  readonly resources: readonly string[];
  /** The coordinator's clock. */
  readonly now: number;
  /** The clock-skew bound. */
  readonly skewMs: number;
  /** The rebalance delay: a joiner gets resources once it has taken part this long. */
  readonly delayMs: number;
  /** The coordinator's acquirer name, recorded in the plan. */
  readonly by: string;
}

/**
 * Whether a new plan is due, and which. One is due when slots joined or left, when the resource set changed, or when
 * a rebalance was asked for; but never while the last plan is still being carried out (at most one rebalance in
 * flight), unless a slot left, since a leaver can never finish it. Joins are damped: while the only news is joins,
 * the plan waits until the newest joiner has taken part for the rebalance delay (so a rolling start is one
 * rebalance), but never longer than twice the delay past the first joiner's; a plan written for any reason
 * includes every slot.
 */
export function decidePlan({ entry, resources, now, skewMs, delayMs, by }: PlanInput): PlanDecision {
  if (!entry.definition) return {};
  const annex = readAnnex(entry.annex);
  const previous = annex.plan;
  const planned = new Set(Object.keys(previous?.targets ?? {}));
  const slots = slotsOf(entry, now, skewMs);
  const fresh = slots.filter((s) => !s.reserved && !planned.has(s.name)).map((s) => s.member!.grantedAt + delayMs);
  const damping = fresh.length ? Math.min(Math.max(...fresh), Math.min(...fresh) + 2 * delayMs) : undefined;
  const wakeAt = damping !== undefined && damping > now ? damping : undefined;
  const set = [...new Set(resources)].sort(compare);
  const names = new Set(slots.map((s) => s.name));
  const joined = [...names].filter((n) => !planned.has(n));
  const left = [...planned].filter((n) => !names.has(n));
  const before = new Set(previous?.resources ?? []);
  const added = set.filter((id) => !before.has(id));
  const current = new Set(set);
  const removed = [...before].filter((id) => !current.has(id));
  const requested = annex.requests > (previous?.answered ?? 0);
  if (!previous && slots.length === 0) return {};
  if (previous && !joined.length && !left.length && !added.length && !removed.length && !requested) return {};
  // Only joins (or the first plan): wait for the newest joiner's delay, within the bound.
  if (wakeAt !== undefined && !left.length && !requested && (!previous || (!added.length && !removed.length))) return { wakeAt };
  if (previous && !left.length && inFlight(previous, slots)) return { wakeAt, waiting: 'in-flight' };
  const reason: RebalanceReason = !previous
    ? 'initial'
    : left.length
      ? 'left'
      : joined.length
        ? 'joined'
        : added.length || removed.length
          ? 'resources-changed'
          : 'requested';
  const detail = [
    joined.length ? `joined: ${joined.join(', ')}` : '',
    left.length ? `left: ${left.join(', ')}` : '',
    added.length || removed.length ? `resources: +${added.length} -${removed.length}` : '',
    requested ? 'requested' : '',
  ].filter(Boolean).join('; ');
  const { targets, moved: taken } = evenTargets(slots, set);
  // Against the last plan: resources it gives to another node than that plan did (a leaver's included).
  const moved = previous ? movedBetween(previous.targets, targets) : taken;
  return {
    wakeAt,
    plan: { generation: (previous?.generation ?? 0) + 1, at: now, by, reason, detail, resources: set, targets, moved, answered: annex.requests },
  };
}

/** How many resources `after` gives to another slot than `before` did (resources new to the set are not counted). */
function movedBetween(before: Readonly<Record<string, readonly string[]>>, after: Readonly<Record<string, readonly string[]>>): number {
  const was = new Map(Object.entries(before).flatMap(([slot, ids]) => ids.map((id) => [id, slot] as const)));
  return Object.entries(after).reduce((sum, [slot, ids]) => sum + ids.filter((id) => was.has(id) && was.get(id) !== slot).length, 0);
}

/** Whether some member does not hold exactly what the plan gives it yet (reserved slots count as done). */
export function inFlight(plan: AllocationPlan, slots: readonly AllocationSlot[]): boolean {
  return slots.some((s) => {
    if (!s.member) return false;
    const target = plan.targets[s.name] ?? [];
    const held = Object.keys(s.member.resources ?? {});
    return held.length !== target.length || target.some((id) => !(id in s.member!.resources!));
  });
}

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

/**
 * The slice of `resources` (sorted) that node `nodeIndex` of `nodeCount` takes in manual mode: contiguous, sizes
 * differing by one at most, and the slices of indexes 0..nodeCount-1 cover the set exactly once.
 */
export function manualSlice(resources: readonly string[], nodeCount: number, nodeIndex: number): string[] {
  const set = [...new Set(resources)].sort(compare);
  const from = Math.floor((nodeIndex * set.length) / nodeCount);
  const to = Math.floor(((nodeIndex + 1) * set.length) / nodeCount);
  return set.slice(from, to);
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

/** Code-point order, the same on every node whatever its locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
