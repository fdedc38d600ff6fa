import { DenyReason } from './deny-reason';
import type { DenyDecision, NextPermits, PermitDecision, ReleaseDecision, RevokeDecision } from './decision';
import { fullMatch } from '../core/pattern';
import type { Holder, NodeIdentity, Permit } from './permit';
import { seedRevision, type SemaphoreEntry, type SemaphoreMove } from './semaphore-entry';
import type { SemaphoreDefinition } from './semaphore-definition';
import { vacantSince, vacatedAfter } from './vacancy.rules';

/** The permits in `permits` that are still live at `horizon`, oldest grant first. */
export function livePermits(permits: readonly Permit[], horizon: number): Permit[] {
  return permits.filter((p) => p.expiresAt > horizon).sort((a, b) => a.fencingToken - b.fencingToken);
}

/*
 * The gatekeeper's rules (seed 000), pure: everything they need is passed in. `skewMs` is the bound on clock
 * disagreement between nodes: a permit counts as live until `expiresAt + skewMs` by the deciding node's clock,
 * so a node whose clock runs ahead never takes a permit its holder still believes in. Ownership is by instance.
 */

/**
 * "Give me a permit": unknown semaphore, group mismatch, acquirer mismatch and pause deny (and withdraw the
 * holder's own permit, so a live edit takes effect at its next refresh); a live permit the holder already has is
 * refreshed; a free permit is granted with the next fencing token; otherwise deny.
 */
export function decideAcquire(entry: SemaphoreEntry | undefined, holder: Holder, now: number, skewMs = 0): PermitDecision {
  const admitted = admit(entry, holder, now, skewMs);
  if ('outcome' in admitted) return admitted;
  const { def, live, own, entry: current } = admitted;
  if (own && !own.released) return refreshed(def, current, live, own, now);
  if (current.graceUntil !== undefined && now - skewMs < current.graceUntil) {
    return deny(
      DenyReason.RECOVERING,
      `"${def.name}" was rebuilt after its data may have been lost; nothing is granted before ${new Date(current.graceUntil + skewMs).toISOString()}`,
    );
  }
  if (live.length < def.permits && !own) {
    const permit: Permit = {
      semaphore: def.name,
      acquirer: holder.acquirer,
      group: holder.group,
      instance: holder.instance,
      fencingToken: grantToken(current, now, skewMs),
      grantedAt: now,
      refreshedAt: now,
      expiresAt: now + def.durationMs,
    };
    const next = { revision: permit.fencingToken, lastToken: permit.fencingToken, permits: [...live, permit] };
    const since = vacantSince(current, live, now, skewMs);
    return since === undefined ? { outcome: 'granted', permit, next } : { outcome: 'granted', permit, next, vacantSince: since };
  }
  const holders = live.map((p) => (p.released ? `${p.acquirer} (released, kept until lockAtLeastFor)` : p.acquirer)).join(', ');
  return deny(DenyReason.NO_PERMIT_AVAILABLE, `all ${def.permits} permit(s) of "${def.name}" are held (by ${holders})`);
}

/**
 * Refreshes exactly the permit given (same instance, same fencing token). Unlike {@link decideAcquire} it never
 * grants a new permit: a holder that lost its permit must learn so, because its token is no longer the newest.
 */
export function decideRefresh(
  entry: SemaphoreEntry | undefined,
  holder: Holder,
  fencingToken: number,
  now: number,
  skewMs = 0,
): PermitDecision {
  const admitted = admit(entry, holder, now, skewMs);
  if ('outcome' in admitted) return admitted;
  const { def, live, own, entry: current } = admitted;
  if (!own || own.fencingToken !== fencingToken || own.released) {
    return deny(
      DenyReason.PERMIT_LOST,
      `permit ${fencingToken} of "${def.name}" is no longer held by "${holder.acquirer}" (expired, released or taken)`,
    );
  }
  return refreshed(def, current, live, own, now);
}

/**
 * Releases the holder's permit with `fencingToken`, compared against the stored entry so a holder whose permit
 * expired and was taken over can never remove the new holder's permit. With `notBefore` (grant time plus
 * `lockAtLeastFor`) still ahead, the permit is kept until then instead, marked released so nobody refreshes it.
 */
export function decideRelease(
  entry: SemaphoreEntry | undefined,
  holder: Holder,
  fencingToken: number,
  now: number,
  notBefore = 0,
  skewMs = 0,
): ReleaseDecision {
  if (!entry) return { outcome: 'not-held' };
  const horizon = now - skewMs;
  const own = entry.permits.find((p) => p.instance === holder.instance && p.fencingToken === fencingToken);
  if (!own || own.expiresAt <= horizon) return { outcome: 'not-held', next: own ? prune(entry, now, horizon, own) : undefined };
  if (notBefore > now) {
    if (own.released && own.expiresAt <= notBefore) return { outcome: 'shortened' };
    const kept: Permit = { ...own, expiresAt: Math.min(own.expiresAt, notBefore), released: true };
    return { outcome: 'shortened', next: { lastToken: entry.lastToken, permits: replace(livePermits(entry.permits, horizon), kept) } };
  }
  return { outcome: 'released', next: prune(entry, now, horizon, own) };
}

/**
 * An operator takes permits away: the one with `fencingToken`, or every live one. They are marked revoked, not
 * removed: the holder is told and removes its own, and until it does (or the permit expires) the slot stays
 * taken, so nobody else is granted while the old holder may still be acting.
 */
export function decideRevoke(entry: SemaphoreEntry | undefined, fencingToken: number | 'all', now: number, skewMs = 0): RevokeDecision {
  if (!entry) return { outcome: 'not-held', revoked: [] };
  const live = livePermits(entry.permits, now - skewMs);
  const targets = live.filter((p) => fencingToken === 'all' || p.fencingToken === fencingToken);
  if (targets.length === 0) return { outcome: 'not-held', revoked: [] };
  const fresh = targets.filter((p) => p.revokedAt === undefined);
  if (fresh.length === 0) return { outcome: 'revoked', revoked: targets };
  const permits = live.map((p) => (fresh.includes(p) ? { ...p, revokedAt: now } : p));
  return { outcome: 'revoked', revoked: targets, next: { lastToken: entry.lastToken, permits } };
}

/**
 * Whether the holder may still rely on its permit `fencingToken` given `entry` (as read or seen by event): the
 * refresh decision without writing. Returns the denial when it may not.
 */
export function judgeHeld(entry: SemaphoreEntry | undefined, holder: Holder, fencingToken: number, now: number, skewMs = 0): DenyDecision | undefined {
  const decision = decideRefresh(entry, holder, fencingToken, now, skewMs);
  return decision.outcome === 'denied' ? decision : undefined;
}

/**
 * The token of a new grant, which is also the revision its write gets: above every revision of the entry, and
 * at least the granting node's clock (plus the skew bound) in microseconds. So a grant under an entry rebuilt
 * after data loss, made after its recovery wait, is above every token the lost entry handed out: those were at
 * most their granter's clock plus the bound, with one-by-one writes after, far slower than one per microsecond.
 */
function grantToken(entry: SemaphoreEntry, now: number, skewMs: number): number {
  return Math.max(entry.revision + 1, seedRevision(now, 0, skewMs));
}

type Admitted = { def: SemaphoreDefinition; entry: SemaphoreEntry; live: Permit[]; own: Permit | undefined };

/** The checks acquire and refresh share; a denial here also withdraws the holder's own permit. */
function admit(entry: SemaphoreEntry | undefined, holder: Holder, now: number, skewMs: number): Admitted | DenyDecision {
  const horizon = now - skewMs;
  const live = entry ? livePermits(entry.permits, horizon) : [];
  const own = live.find((p) => p.instance === holder.instance);
  const withdraw = (reason: DenyReason, message: string): DenyDecision =>
    own && entry ? { ...deny(reason, message, prune(entry, now, horizon, own)), withdrawn: own } : deny(reason, message);
  const def = entry?.definition;
  if (!entry || !def) return withdraw(DenyReason.UNKNOWN_SEMAPHORE, 'no definition with this name');
  if (!fullMatch(def.groupPattern, holder.group)) {
    return withdraw(DenyReason.GROUP_MISMATCH, `group "${holder.group}" does not match /${def.groupPattern}/`);
  }
  if (!fullMatch(def.acquirerPattern, holder.acquirer)) {
    return withdraw(DenyReason.ACQUIRER_MISMATCH, `acquirer "${holder.acquirer}" does not match /${def.acquirerPattern}/`);
  }
  if (entry.move) return withdraw(DenyReason.MOVING, movingMessage(def.name, entry.move));
  if (def.permits === 0) return withdraw(DenyReason.PAUSED, `"${def.name}" is paused (permits: 0)`);
  if (own?.revokedAt !== undefined) {
    return withdraw(DenyReason.PERMIT_REVOKED, `permit ${own.fencingToken} of "${def.name}" was revoked by an operator`);
  }
  if (own && live.indexOf(own) >= def.permits) {
    return withdraw(
      DenyReason.OVER_CAPACITY,
      `"${def.name}" now has ${def.permits} permit(s) and ${live.length} live holders; older holders keep theirs`,
    );
  }
  return { def, entry, live, own };
}

/** Why nothing is granted on an entry that is part of a move between stores. */
function movingMessage(name: string, move: SemaphoreMove): string {
  return move.state === 'arriving'
    ? `"${name}" is moving here from the ${move.from} store: nothing is granted before \`nestjs-gatekeeper store move --finish\` finds no live permit left there`
    : `"${name}" moved to the ${move.to} store on ${new Date(move.at).toISOString()}: nothing is granted here any more (nodes must use the ${move.to} store)`;
}

function refreshed(def: SemaphoreDefinition, entry: SemaphoreEntry, live: Permit[], own: Permit, now: number): PermitDecision {
  const permit: Permit = { ...own, refreshedAt: now, expiresAt: now + def.durationMs };
  return { outcome: 'refreshed', permit, next: { lastToken: entry.lastToken, permits: replace(live, permit) } };
}

function deny(reason: DenyReason, message: string, next?: NextPermits): DenyDecision {
  return next ? { outcome: 'denied', reason, message, next } : { outcome: 'denied', reason, message };
}

/**
 * Live permits without `dropped`; expired ones are garbage-collected on every write. What leaves is remembered in
 * `vacatedAt`: this write may leave no permit that ends later.
 */
function prune(entry: SemaphoreEntry, now: number, horizon: number, dropped: Permit): NextPermits {
  const permits = livePermits(entry.permits, horizon).filter((p) => p.fencingToken !== dropped.fencingToken);
  const vacatedAt = vacatedAfter(entry, permits, now);
  return vacatedAt === undefined ? { lastToken: entry.lastToken, permits } : { lastToken: entry.lastToken, permits, vacatedAt };
}

function replace(permits: Permit[], updated: Permit): Permit[] {
  return permits.map((p) => (p.fencingToken === updated.fencingToken ? updated : p));
}

/**
 * When the store's own clock must have reached for a write of `next` over `entry`, decided at `now`, to stand (see
 * `RecordWriteOptions.notBefore`): every permit the write drops that the decision took as lapsed (expired by
 * `now - skewMs`) has lapsed on the store's clock too, and a recovery wait a grant took as over is over. `undefined`:
 * the write takes nothing as lapsed. Where permits are timed by the store's clock, this makes every takeover the
 * store's own decision, whatever a node's count of that clock says.
 */
export function lapsedOnStoreBy(
  entry: SemaphoreEntry | undefined,
  next: Pick<SemaphoreEntry, 'permits'>,
  now: number,
  skewMs: number,
): number | undefined {
  if (!entry) return undefined;
  const horizon = now - skewMs;
  const kept = new Set(next.permits.map((p) => p.fencingToken));
  const times = entry.permits.filter((p) => !kept.has(p.fencingToken) && p.expiresAt <= horizon).map((p) => p.expiresAt + skewMs);
  const grants = next.permits.some((p) => !entry.permits.some((q) => q.fencingToken === p.fencingToken));
  if (grants && entry.graceUntil !== undefined) times.push(entry.graceUntil + skewMs);
  return times.length === 0 ? undefined : Math.max(...times);
}

/** The entry a decision writes over `entry`: its next permits and tokens, the revision one up (or the grant's token). */
export function stampEntry(entry: SemaphoreEntry, next: NextPermits): Omit<SemaphoreEntry, 'writeId'> {
  const revision = Math.max(entry.revision + 1, next.revision ?? 0);
  // `vacatedAt` changes only with a removal; every other write (a refresh) carries the read one over untouched.
  return { ...entry, revision, lastToken: next.lastToken, permits: next.permits, ...(next.vacatedAt !== undefined && { vacatedAt: next.vacatedAt }) };
}

/** The identities among `identities` that `definition`'s group and acquirer patterns admit (who could hold its permits). */
export function admittedBy<T extends NodeIdentity>(definition: SemaphoreDefinition, identities: readonly T[]): T[] {
  return identities.filter((who) => fullMatch(definition.groupPattern, who.group) && fullMatch(definition.acquirerPattern, who.acquirer));
}
