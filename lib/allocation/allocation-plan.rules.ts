import { compareCodePoints as compare } from '../core/code-point-order';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import type { AllocationPlan, RebalanceReason } from './allocation';
import { readAnnex } from './allocation-annex.codec';
import { slotsOf, type AllocationSlot } from './allocation-slots.rules';

/*
 * The plan: where resources should go (pure). It is written by the coordinator into the entry's annex and only
 * says where resources should go; who owns one is what the permits say (allocation-holdings.rules.ts).
 */

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
