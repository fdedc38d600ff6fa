import type { Permit } from '../permits/permit';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import type { Leader } from './election';

/**
 * The leader of `election` in `entry` at `now`: the holder of its live permit, unless an operator revoked it or
 * its holder released it (it is stepping down). `undefined` when nobody leads.
 */
export function leaderIn(election: string, entry: SemaphoreEntry | undefined, now: number): Leader | undefined {
  const permit = entry?.permits.find((p) => p.expiresAt > now && p.revokedAt === undefined && !p.released);
  return permit ? leaderOf(election, permit) : undefined;
}

/** A permit of an election's semaphore, as its leader. */
export function leaderOf(election: string, permit: Permit): Leader {
  return {
    election,
    instance: permit.instance,
    acquirer: permit.acquirer,
    group: permit.group,
    epoch: permit.fencingToken,
    since: permit.grantedAt,
    expiresAt: permit.expiresAt,
  };
}

/**
 * When a candidate should next try to become leader, judged from its view of the election's entry: at once when
 * no permit occupies the slot, else just after the last one lapses for every node (its expiry plus the clock-skew
 * bound), which is when the first grant can succeed.
 */
export function nextAttemptAt(entry: SemaphoreEntry | undefined, now: number, skewMs: number): number {
  const occupied = entry?.permits.filter((p) => p.expiresAt + skewMs > now) ?? [];
  return occupied.length === 0 ? now : Math.max(...occupied.map((p) => p.expiresAt + skewMs + 1));
}

/** How the two leaders compare: `'same'` leader and epoch, `'changed'` to another (or none), or `'none'` either way. */
export function leaderChange(before: Leader | undefined, after: Leader | undefined): 'same' | 'changed' | 'none' {
  if (!before && !after) return 'none';
  if (before && after && before.instance === after.instance && before.epoch === after.epoch) return 'same';
  return 'changed';
}
