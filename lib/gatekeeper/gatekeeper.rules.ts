import { DenyReason } from './deny-reason';
import type { DenyDecision, NextPermitState, PermitDecision, ReleaseDecision } from './decision';
import { fullMatch } from './pattern';
import { livePermits, type NodeIdentity, type Permit, type PermitState } from './permit';
import type { SemaphoreDefinition } from './semaphore-definition';

/**
 * The gatekeeper's decision for "give me a permit" (seed 000): unknown semaphore, group mismatch and acquirer
 * mismatch deny; a live permit already held by the acquirer is refreshed; a free permit is granted with the next
 * fencing token; otherwise deny. Pure: everything it needs is passed in.
 *
 * `skewMs` is the bound on clock disagreement between nodes: a permit counts as live until `expiresAt + skewMs`
 * by this node's clock, so a node whose clock runs ahead never takes a permit its holder still believes in.
 */
export function decideAcquire(
  definition: SemaphoreDefinition | undefined,
  state: PermitState,
  node: NodeIdentity,
  now: number,
  skewMs = 0,
): PermitDecision {
  const admitted = admit(definition, state, node, now - skewMs);
  if ('outcome' in admitted) return admitted;
  const { def, live, own } = admitted;
  if (own) return refreshed(def, state, live, own, now);
  if (live.length < def.permits) {
    const permit: Permit = {
      semaphore: def.name,
      acquirer: node.acquirer,
      group: node.group,
      fencingToken: state.lastToken + 1,
      grantedAt: now,
      refreshedAt: now,
      expiresAt: now + def.durationMs,
    };
    return { outcome: 'granted', permit, next: { lastToken: permit.fencingToken, permits: [...live, permit] } };
  }
  const holders = live.map((p) => p.acquirer).join(', ');
  return deny(DenyReason.NO_PERMIT_AVAILABLE, `all ${def.permits} permit(s) of "${def.name}" are held (by ${holders})`);
}

/**
 * Refreshes exactly the permit given (same acquirer, same fencing token). Unlike {@link decideAcquire} it never
 * grants a new permit: a holder that lost its permit must learn so, because its token is no longer the newest.
 */
export function decideRefresh(
  definition: SemaphoreDefinition | undefined,
  state: PermitState,
  node: NodeIdentity,
  fencingToken: number,
  now: number,
  skewMs = 0,
): PermitDecision {
  const admitted = admit(definition, state, node, now - skewMs);
  if ('outcome' in admitted) return admitted;
  const { def, live, own } = admitted;
  if (!own || own.fencingToken !== fencingToken) {
    return deny(
      DenyReason.PERMIT_LOST,
      `permit ${fencingToken} of "${def.name}" is no longer held by "${node.acquirer}" (expired, released or taken)`,
    );
  }
  return refreshed(def, state, live, own, now);
}

/**
 * Releases the acquirer's permit with `fencingToken`, compared against the stored state so a holder whose permit
 * expired and was taken over can never remove the new holder's permit. With `notBefore` (grant time plus
 * `lockAtLeastFor`) still ahead, the permit is shortened to end then instead of being removed.
 */
export function decideRelease(
  state: PermitState,
  node: NodeIdentity,
  fencingToken: number,
  now: number,
  notBefore = 0,
  skewMs = 0,
): ReleaseDecision {
  const horizon = now - skewMs;
  const own = state.permits.find((p) => p.acquirer === node.acquirer && p.fencingToken === fencingToken);
  if (!own || own.expiresAt <= horizon) return { outcome: 'not-held', next: own ? prune(state, horizon, own) : undefined };
  if (notBefore > now) {
    const expiresAt = Math.min(own.expiresAt, notBefore);
    if (expiresAt === own.expiresAt) return { outcome: 'shortened' };
    const shortened = { ...own, expiresAt };
    return { outcome: 'shortened', next: { lastToken: state.lastToken, permits: replace(livePermits(state, horizon), shortened) } };
  }
  return { outcome: 'released', next: prune(state, horizon, own) };
}

/** An operator removes the permit with `fencingToken`, whoever holds it. */
export function decideForceRelease(state: PermitState, fencingToken: number, now: number, skewMs = 0): ReleaseDecision {
  const horizon = now - skewMs;
  const target = livePermits(state, horizon).find((p) => p.fencingToken === fencingToken);
  return target ? { outcome: 'released', next: prune(state, horizon, target) } : { outcome: 'not-held' };
}

type Admitted = { def: SemaphoreDefinition; live: Permit[]; own: Permit | undefined };

/** The checks acquire and refresh share. A denial here also withdraws the acquirer's own permit, so that a live
 * edit that excludes the holder takes effect at its next refresh rather than at expiry. `horizon` is the time
 * against which liveness is judged (now less the clock-skew bound). */
function admit(
  definition: SemaphoreDefinition | undefined,
  state: PermitState,
  node: NodeIdentity,
  horizon: number,
): Admitted | DenyDecision {
  const now = horizon;
  const live = livePermits(state, now);
  const own = live.find((p) => p.acquirer === node.acquirer);
  const withdraw = (reason: DenyReason, message: string): DenyDecision =>
    deny(reason, message, own ? prune(state, now, own) : undefined);
  if (!definition) return withdraw(DenyReason.UNKNOWN_SEMAPHORE, 'no definition with this name');
  const def = definition;
  if (!fullMatch(def.groupPattern, node.group)) {
    return withdraw(DenyReason.GROUP_MISMATCH, `group "${node.group}" does not match /${def.groupPattern}/`);
  }
  if (!fullMatch(def.acquirerPattern, node.acquirer)) {
    return withdraw(DenyReason.ACQUIRER_MISMATCH, `acquirer "${node.acquirer}" does not match /${def.acquirerPattern}/`);
  }
  if (def.permits === 0) return withdraw(DenyReason.PAUSED, `"${def.name}" is paused (permits: 0)`);
  if (own && live.indexOf(own) >= def.permits) {
    return withdraw(
      DenyReason.OVER_CAPACITY,
      `"${def.name}" now has ${def.permits} permit(s) and ${live.length} live holders; older holders keep theirs`,
    );
  }
  return { def, live, own };
}

function refreshed(def: SemaphoreDefinition, state: PermitState, live: Permit[], own: Permit, now: number): PermitDecision {
  const permit: Permit = { ...own, refreshedAt: now, expiresAt: now + def.durationMs };
  return { outcome: 'refreshed', permit, next: { lastToken: state.lastToken, permits: replace(live, permit) } };
}

function deny(reason: DenyReason, message: string, next?: NextPermitState): DenyDecision {
  return next ? { outcome: 'denied', reason, message, next } : { outcome: 'denied', reason, message };
}

/** Live permits without `dropped`; expired ones are garbage-collected on every write. */
function prune(state: PermitState, now: number, dropped: Permit): NextPermitState {
  return { lastToken: state.lastToken, permits: livePermits(state, now).filter((p) => p !== dropped && p.fencingToken !== dropped.fencingToken) };
}

function replace(permits: Permit[], updated: Permit): Permit[] {
  return permits.map((p) => (p.fencingToken === updated.fencingToken ? updated : p));
}
