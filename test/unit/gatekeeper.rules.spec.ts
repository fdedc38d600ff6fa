import { DenyReason } from '../../lib/gatekeeper/deny-reason';
import { decideAcquire, decideRefresh, decideRelease } from '../../lib/gatekeeper/gatekeeper.rules';
import type { PermitDecision } from '../../lib/gatekeeper/decision';
import { initialPermitState, type NodeIdentity, type PermitState } from '../../lib/gatekeeper/permit';
import { validateDefinition } from '../../lib/gatekeeper/definition.validator';

const T0 = 1_700_000_000_000;
const def = (over: Partial<Parameters<typeof validateDefinition>[0]> = {}) =>
  validateDefinition({ name: 'billing', permits: 1, duration: 10_000, ...over });
const node = (acquirer: string, group = 'production'): NodeIdentity => ({ acquirer, group });
const empty = initialPermitState(T0);

/** Applies a decision's next state the way the engine does. */
function apply(state: PermitState, decision: { next?: { lastToken: number; permits: PermitState['permits'] } }): PermitState {
  return decision.next ? { revision: state.revision + 1, writeId: 'w', ...decision.next } : state;
}
function granted(d: PermitDecision) {
  if (d.outcome === 'denied') throw new Error(`expected a grant, got ${d.reason}`);
  return d;
}

describe('decideAcquire', () => {
  it('denies an unknown semaphore', () => {
    const d = decideAcquire(undefined, empty, node('a'), T0);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.UNKNOWN_SEMAPHORE });
  });

  it('denies a group that does not match the whole pattern', () => {
    const d = decideAcquire(def({ groupPattern: 'prod' }), empty, node('a', 'production'), T0);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.GROUP_MISMATCH });
    expect(granted(decideAcquire(def({ groupPattern: 'prod.*' }), empty, node('a'), T0)).outcome).toBe('granted');
  });

  it('denies an acquirer that does not match', () => {
    const d = decideAcquire(def({ acquirerPattern: 'app-300[01]' }), empty, node('app-3002'), T0);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.ACQUIRER_MISMATCH });
  });

  it('grants a free permit with the next fencing token and the definition duration', () => {
    const d = granted(decideAcquire(def(), empty, node('a'), T0));
    expect(d.outcome).toBe('granted');
    expect(d.permit).toEqual({
      semaphore: 'billing', acquirer: 'a', group: 'production',
      fencingToken: T0 + 1, grantedAt: T0, refreshedAt: T0, expiresAt: T0 + 10_000,
    });
    expect(d.next.lastToken).toBe(T0 + 1);
  });

  it('refreshes a live permit the acquirer already holds, keeping its token', () => {
    const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));
    const d = granted(decideAcquire(def(), s1, node('a'), T0 + 4000));
    expect(d.outcome).toBe('refreshed');
    expect(d.permit.fencingToken).toBe(T0 + 1);
    expect(d.permit.expiresAt).toBe(T0 + 14_000);
    expect(d.permit.grantedAt).toBe(T0);
  });

  it('denies when every permit is held by others, naming the holders', () => {
    const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));
    const d = decideAcquire(def(), s1, node('b'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(d.outcome === 'denied' && d.message).toContain('a');
    expect(d.next).toBeUndefined();
  });

  it('lets another acquirer take over after expiry, with a larger token', () => {
    const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));
    expect(decideAcquire(def(), s1, node('b'), T0 + 9_999).outcome).toBe('denied');
    const d = granted(decideAcquire(def(), s1, node('b'), T0 + 10_000));
    expect(d.permit.fencingToken).toBe(T0 + 2);
    expect(d.next.permits.map((p) => p.acquirer)).toEqual(['b']);
  });

  it('grants as many permits as defined', () => {
    let s = empty;
    s = apply(s, granted(decideAcquire(def({ permits: 2 }), s, node('a'), T0)));
    s = apply(s, granted(decideAcquire(def({ permits: 2 }), s, node('b'), T0)));
    expect(decideAcquire(def({ permits: 2 }), s, node('c'), T0)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(s.permits.map((p) => p.fencingToken)).toEqual([T0 + 1, T0 + 2]);
  });

  it('denies a paused semaphore and withdraws the holder\'s permit', () => {
    const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));
    const d = decideAcquire(def({ permits: 0 }), s1, node('a'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.PAUSED });
    expect(d.next?.permits).toEqual([]);
    expect(d.next?.lastToken).toBe(T0 + 1);
  });

  it.each([
    ['group moved', { groupPattern: 'dr-site' }, DenyReason.GROUP_MISMATCH],
    ['acquirer excluded', { acquirerPattern: 'b' }, DenyReason.ACQUIRER_MISMATCH],
  ])('withdraws the holder\'s permit at its next refresh when a live edit excludes it (%s)', (_, edit, reason) => {
    const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));
    const d = decideAcquire(def(edit), s1, node('a'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason });
    expect(d.next?.permits).toEqual([]);
  });

  it('withdraws the newest holders when permits are lowered, keeping the oldest', () => {
    let s = empty;
    s = apply(s, granted(decideAcquire(def({ permits: 2 }), s, node('a'), T0)));
    s = apply(s, granted(decideAcquire(def({ permits: 2 }), s, node('b'), T0 + 1)));
    expect(granted(decideAcquire(def({ permits: 1 }), s, node('a'), T0 + 2)).outcome).toBe('refreshed');
    const d = decideAcquire(def({ permits: 1 }), s, node('b'), T0 + 2);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.OVER_CAPACITY });
    expect(d.next?.permits.map((p) => p.acquirer)).toEqual(['a']);
  });

  it('withdraws a holder\'s permit when its semaphore is no longer defined', () => {
    const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));
    const d = decideAcquire(undefined, s1, node('a'), T0 + 1);
    expect(d).toMatchObject({ reason: DenyReason.UNKNOWN_SEMAPHORE, next: { permits: [] } });
  });

  it('prunes expired permits when it writes', () => {
    let s = empty;
    s = apply(s, granted(decideAcquire(def({ permits: 2 }), s, node('a'), T0)));
    s = apply(s, granted(decideAcquire(def({ permits: 2 }), s, node('b'), T0 + 5_000)));
    const d = granted(decideAcquire(def({ permits: 2 }), s, node('c'), T0 + 10_000));
    expect(d.next.permits.map((p) => p.acquirer)).toEqual(['b', 'c']);
  });

  it('keeps fencing tokens growing across any sequence of grants', () => {
    let s = empty;
    let last = 0;
    for (let i = 0; i < 50; i++) {
      const d = decideAcquire(def(), s, node(`n${i % 3}`), T0 + i * 10_000);
      const g = granted(d);
      if (g.outcome === 'granted') {
        expect(g.permit.fencingToken).toBeGreaterThan(last);
        last = g.permit.fencingToken;
      }
      s = apply(s, g);
    }
    expect(last).toBe(T0 + 50);
  });
});

describe('decideRefresh', () => {
  const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));

  it('refreshes the exact permit held', () => {
    const d = granted(decideRefresh(def(), s1, node('a'), T0 + 1, T0 + 5_000));
    expect(d).toMatchObject({ outcome: 'refreshed', permit: { fencingToken: T0 + 1, expiresAt: T0 + 15_000 } });
  });

  it('denies PERMIT_LOST for a stale token, even if the acquirer could be granted anew', () => {
    const expired = decideRefresh(def(), s1, node('a'), T0 + 1, T0 + 10_000);
    expect(expired).toMatchObject({ outcome: 'denied', reason: DenyReason.PERMIT_LOST });
    expect(decideRefresh(def(), s1, node('a'), 42, T0 + 1)).toMatchObject({ reason: DenyReason.PERMIT_LOST });
  });

  it('applies the definition checks before the token check', () => {
    expect(decideRefresh(def({ permits: 0 }), s1, node('a'), T0 + 1, T0 + 1)).toMatchObject({ reason: DenyReason.PAUSED });
  });
});

describe('decideRelease', () => {
  const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0));

  it('removes the holder\'s permit', () => {
    expect(decideRelease(s1, node('a'), T0 + 1, T0 + 100)).toMatchObject({ outcome: 'released', next: { permits: [], lastToken: T0 + 1 } });
  });

  it('never removes another holder\'s permit', () => {
    const s2 = apply(s1, granted(decideAcquire(def(), s1, node('b'), T0 + 10_000)));
    const d = decideRelease(s2, node('a'), T0 + 1, T0 + 10_001);
    expect(d.outcome).toBe('not-held');
    expect(d.next?.permits ?? s2.permits).toEqual(s2.permits);
    expect(decideRelease(s2, node('a'), T0 + 2, T0 + 10_001).outcome).toBe('not-held');
  });

  it('shortens instead of removing while lockAtLeastFor has not passed', () => {
    const d = decideRelease(s1, node('a'), T0 + 1, T0 + 100, T0 + 3_000);
    expect(d).toMatchObject({ outcome: 'shortened' });
    expect(d.next?.permits[0].expiresAt).toBe(T0 + 3_000);
  });

  it('never extends a permit when lockAtLeastFor reaches past its expiry', () => {
    const d = decideRelease(s1, node('a'), T0 + 1, T0 + 100, T0 + 60_000);
    expect(d).toEqual({ outcome: 'shortened' });
  });

  it('reports an expired permit as not held and cleans it up', () => {
    const d = decideRelease(s1, node('a'), T0 + 1, T0 + 10_000);
    expect(d).toMatchObject({ outcome: 'not-held', next: { permits: [] } });
  });
});

describe('clock-skew bound', () => {
  const skew = 500;
  const s1 = apply(empty, decideAcquire(def(), empty, node('a'), T0, skew));

  it('counts another holder\'s permit as live until expiry plus the bound', () => {
    expect(decideAcquire(def(), s1, node('b'), T0 + 10_000, skew)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(decideAcquire(def(), s1, node('b'), T0 + 10_499, skew)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(granted(decideAcquire(def(), s1, node('b'), T0 + 10_500, skew)).permit.acquirer).toBe('b');
  });

  it('lets the holder refresh inside the window, since no one else can have taken it', () => {
    expect(granted(decideRefresh(def(), s1, node('a'), T0 + 1, T0 + 10_200, skew)).permit.expiresAt).toBe(T0 + 20_200);
  });

  it('releases a permit still inside the window', () => {
    expect(decideRelease(s1, node('a'), T0 + 1, T0 + 10_200, 0, skew)).toMatchObject({ outcome: 'released' });
  });
});
