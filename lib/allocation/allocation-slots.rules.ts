import { fullMatch } from '../core/pattern';
import type { Permit } from '../permits/permit';
import { livePermits } from '../permits/permit.rules';
import type { SemaphoreEntry } from '../permits/semaphore-entry';

/*
 * Who takes part in an allocation and who owns what, read from the permits of its semaphore (pure; see
 * allocation.rules.ts for the safety rule).
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
