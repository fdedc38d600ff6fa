import type { Permit } from './permit';
import type { SemaphoreEntry } from './semaphore-entry';

/*
 * Since when nobody could run a semaphore's job, learnt from the grant itself (missed runs, issue 23). Pure.
 *
 * A run starts only on a permit valid for a quarter of its duration or more (the executor's start margin), so every
 * run under an earlier permit started before that permit ended. A permit ends at its `expiresAt` if it lapsed, or
 * when its holder removed it (released, withdrawn after an edit, a revocation or lowered permits): the entry keeps
 * the latest removal in `vacatedAt`. Every bound here errs late: a later "vacant since" can only make a scheduler
 * think fewer instants were missed, never run an instant a holder may already have run.
 */

/**
 * Since when (epoch ms, the granting node's clock, at most `now`) no permit of `entry` could vouch for a run
 * starting, for a node granted a fresh permit at `now`; `undefined` when some permit is still `live` (another
 * holder could run) or the semaphore was never held (nothing to miss).
 *
 * - A lapsed permit still in the entry ends at its `expiresAt`, taken as is: it was written by its holder's clock,
 *   and the holder starts runs only while `expiresAt - skewMs - now` leaves a quarter of the duration, so any start
 *   reads before `expiresAt` on every clock within the skew bound.
 * - A removed permit ends by `vacatedAt`, the remover's clock. Only its holder removes a live permit (release,
 *   withdrawal), after its last start; our clock may be up to `skewMs` ahead of its clock, so the bound is
 *   `vacatedAt + skewMs`.
 * - A rebuilt entry (data loss) counts as vacant from its `graceUntil` at the earliest: the lost holders may have run
 *   until then. It is the rebuilder's clock, so again `+ skewMs`, as the recovery wait itself reads it.
 */
export function vacantSince(entry: SemaphoreEntry, live: readonly Permit[], now: number, skewMs: number): number | undefined {
  if (live.length > 0) return undefined;
  let since: number | undefined;
  for (const p of entry.permits) since = later(since, p.expiresAt);
  if (entry.vacatedAt !== undefined) since = later(since, entry.vacatedAt + skewMs);
  if (entry.graceUntil !== undefined) since = later(since, entry.graceUntil + skewMs);
  return since === undefined ? undefined : Math.min(since, now);
}

/**
 * The entry's `vacatedAt` after a write at `now` that keeps only `kept` of its permits: the latest end of every
 * permit it drops (a live one ends now, a lapsed one at its `expiresAt`), never going back.
 *
 * Only writes that may leave no later-ending permit behind need it (release, withdrawal). A grant or a refresh
 * drops only lapsed permits (`expiresAt <= now - skewMs`) and keeps a permit ending after them, whose own end is
 * recorded in turn, so they skip this work.
 */
export function vacatedAfter(entry: SemaphoreEntry, kept: readonly Permit[], now: number): number | undefined {
  const keptTokens = new Set(kept.map((p) => p.fencingToken));
  let at = entry.vacatedAt;
  for (const p of entry.permits) if (!keptTokens.has(p.fencingToken)) at = later(at, Math.min(p.expiresAt, now));
  return at;
}

function later(a: number | undefined, b: number): number {
  return a === undefined ? b : Math.max(a, b);
}
