import { admittedBy, livePermits } from './permit.rules';
import type { Holder } from './permit';
import type { SemaphoreEntry } from './semaphore-entry';

/**
 * Whether `holder` should give way, for a moment, to the instances that held this semaphore's free slots just
 * before: in release mode (a run that ends with `lockAtLeastFor`) every node sees the slot free at the same tick,
 * and all but one would spend a compare-and-set that loses. True when every free slot was last held by another
 * instance that released it with a hold (its permit is marked `released`), whose hold ended less than one
 * duration ago, and that the definition still admits. `holder` itself held none of them (then it goes at once).
 *
 * Only a head start, never a denial: a node that hears no grant within it decides as before. A permit that simply
 * lapsed (its holder died or stalled) gives no head start, so a takeover is never slower.
 */
export function givesWayToIncumbents(entry: SemaphoreEntry | undefined, holder: Holder, now: number, skewMs = 0): boolean {
  const def = entry?.definition;
  if (!entry || !def || def.permits <= 0) return false;
  const horizon = now - skewMs;
  const free = def.permits - livePermits(entry.permits, horizon).length;
  if (free <= 0) return false;
  if (entry.permits.some((p) => p.instance === holder.instance)) return false;
  const incumbents = entry.permits.filter((p) => p.released && p.revokedAt === undefined && p.expiresAt <= horizon && horizon - p.expiresAt < def.durationMs);
  return admittedBy(def, incumbents).length >= free;
}
