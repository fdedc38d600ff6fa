import { DenyReason } from '../../lib/permits/deny-reason';
import { decideAcquire, decideRefresh, decideRelease, decideRevoke, judgeHeld } from '../../lib/permits/permit.rules';
import type { NextPermits, PermitDecision } from '../../lib/permits/decision';
import type { Holder } from '../../lib/permits/permit';
import { seedRevision, type SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { validateDefinition } from '../../lib/permits/definition.validator';

const T0 = 1_700_000_000_000;
const R0 = seedRevision(T0);
const def = (over: Partial<Parameters<typeof validateDefinition>[0]> = {}) =>
  validateDefinition({ name: 'billing', permits: 1, duration: 10_000, ...over });
const node = (acquirer: string, group = 'production', instance = `${acquirer}/1`): Holder => ({ acquirer, group, instance });
const empty: SemaphoreEntry = { revision: R0, writeId: '', definition: def(), lastToken: 0, permits: [] };
/** The same entry under another definition (a live edit). */
const edited = (entry: SemaphoreEntry, over: Parameters<typeof def>[0]): SemaphoreEntry => ({ ...entry, definition: def(over) });

/** Applies a decision's next permits the way the engine does. */
function apply(entry: SemaphoreEntry, decision: { next?: NextPermits }): SemaphoreEntry {
  if (!decision.next) return entry;
  const { revision, ...rest } = decision.next;
  return { ...entry, writeId: 'w', ...rest, revision: Math.max(entry.revision + 1, revision ?? 0) };
}
function granted(d: PermitDecision) {
  if (d.outcome === 'denied') throw new Error(`expected a grant, got ${d.reason}`);
  return d;
}

describe('decideAcquire', () => {
  it('grants nothing on an entry moving between stores, and withdraws its holder\'s permit there at its refresh', () => {
    const arriving: SemaphoreEntry = { ...empty, move: { state: 'arriving', from: 'postgres', at: T0 } };
    expect(decideAcquire(arriving, node('a'), T0)).toMatchObject({ outcome: 'denied', reason: DenyReason.MOVING, message: expect.stringContaining('moving here from the postgres store') });
    const held = apply(empty, granted(decideAcquire(empty, node('a'), T0)));
    const left: SemaphoreEntry = { ...held, move: { state: 'left', to: 'redis', at: T0 + 1 } };
    const refresh = decideRefresh(left, node('a'), held.permits[0].fencingToken, T0 + 2);
    expect(refresh).toMatchObject({ outcome: 'denied', reason: DenyReason.MOVING, withdrawn: { acquirer: 'a' }, message: expect.stringContaining('moved to the redis store') });
    expect(decideAcquire(left, node('b'), T0 + 20_000)).toMatchObject({ reason: DenyReason.MOVING });
  });

  it('denies an unknown or removed semaphore', () => {
    expect(decideAcquire(undefined, node('a'), T0)).toMatchObject({ outcome: 'denied', reason: DenyReason.UNKNOWN_SEMAPHORE });
    expect(decideAcquire({ ...empty, definition: null }, node('a'), T0)).toMatchObject({ reason: DenyReason.UNKNOWN_SEMAPHORE });
  });

  it('denies a group that does not match the whole pattern', () => {
    expect(decideAcquire(edited(empty, { groupPattern: 'prod' }), node('a', 'production'), T0)).toMatchObject({ reason: DenyReason.GROUP_MISMATCH });
    expect(granted(decideAcquire(edited(empty, { groupPattern: 'prod.*' }), node('a'), T0)).outcome).toBe('granted');
  });

  it('denies an acquirer that does not match', () => {
    const d = decideAcquire(edited(empty, { acquirerPattern: 'app-300[01]' }), node('app-3002'), T0);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.ACQUIRER_MISMATCH });
  });

  it('grants a free permit whose token is the revision of the granting write', () => {
    const d = granted(decideAcquire(empty, node('a'), T0));
    expect(d.permit).toEqual({
      semaphore: 'billing', acquirer: 'a', group: 'production', instance: 'a/1',
      fencingToken: R0 + 1, grantedAt: T0, refreshedAt: T0, expiresAt: T0 + 10_000,
    });
    expect(d.next.lastToken).toBe(R0 + 1);
    expect(apply(empty, d).revision).toBe(d.permit.fencingToken);
  });

  it('gives a grant a token of at least the clock (plus the skew bound) in microseconds', () => {
    const old: SemaphoreEntry = { ...empty, revision: 5 };
    expect(granted(decideAcquire(old, node('a'), T0, 500)).permit.fencingToken).toBe((T0 + 500) * 1000);
    const ahead: SemaphoreEntry = { ...empty, revision: (T0 + 9_000) * 1000 };
    expect(granted(decideAcquire(ahead, node('a'), T0, 500)).permit.fencingToken).toBe(ahead.revision + 1);
  });

  it('refreshes a live permit the same instance holds, keeping its token', () => {
    const s1 = apply(empty, decideAcquire(empty, node('a'), T0));
    const d = granted(decideAcquire(s1, node('a'), T0 + 4000));
    expect(d).toMatchObject({ outcome: 'refreshed', permit: { fencingToken: R0 + 1, expiresAt: T0 + 14_000, grantedAt: T0 } });
  });

  it('gives another instance with the same acquirer name no share of the permit', () => {
    const s1 = apply(empty, decideAcquire(empty, node('app', 'production', 'app/first'), T0));
    const d = decideAcquire(s1, node('app', 'production', 'app/second'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.NO_PERMIT_AVAILABLE });
  });

  it('denies when every permit is held by others, naming the holders', () => {
    const s1 = apply(empty, decideAcquire(empty, node('a'), T0));
    const d = decideAcquire(s1, node('b'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(d.outcome === 'denied' && d.message).toContain('a');
    expect(d.next).toBeUndefined();
  });

  it('lets another instance take over after expiry, with a larger token', () => {
    const s1 = apply(empty, decideAcquire(empty, node('a'), T0));
    expect(decideAcquire(s1, node('b'), T0 + 9_999).outcome).toBe('denied');
    const d = granted(decideAcquire(s1, node('b'), T0 + 10_000));
    // At least the granter's clock in microseconds: above anything an entry lost before could have handed out.
    expect(d.permit.fencingToken).toBe((T0 + 10_000) * 1000);
    expect(d.next).toMatchObject({ revision: d.permit.fencingToken, lastToken: d.permit.fencingToken });
    expect(d.next.permits.map((p) => p.acquirer)).toEqual(['b']);
  });

  it('grants as many permits as defined', () => {
    let s = edited(empty, { permits: 2 });
    s = apply(s, granted(decideAcquire(s, node('a'), T0)));
    s = apply(s, granted(decideAcquire(s, node('b'), T0)));
    expect(decideAcquire(s, node('c'), T0)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(s.permits.map((p) => p.fencingToken)).toEqual([R0 + 1, R0 + 2]);
  });

  it('denies a paused semaphore and withdraws the holder\'s permit, naming it', () => {
    const s1 = apply(empty, decideAcquire(empty, node('a'), T0));
    const d = decideAcquire(edited(s1, { permits: 0 }), node('a'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.PAUSED, withdrawn: { fencingToken: R0 + 1 } });
    expect(d.next?.permits).toEqual([]);
    expect(d.next?.lastToken).toBe(R0 + 1);
  });

  it.each([
    ['group moved', { groupPattern: 'dr-site' }, DenyReason.GROUP_MISMATCH],
    ['acquirer excluded', { acquirerPattern: 'b' }, DenyReason.ACQUIRER_MISMATCH],
  ])('withdraws the holder\'s permit at its next refresh when a live edit excludes it (%s)', (_, edit, reason) => {
    const s1 = apply(empty, decideAcquire(empty, node('a'), T0));
    const d = decideAcquire(edited(s1, edit), node('a'), T0 + 1);
    expect(d).toMatchObject({ outcome: 'denied', reason });
    expect(d.next?.permits).toEqual([]);
  });

  it('withdraws the newest holders when permits are lowered, keeping the oldest', () => {
    let s = edited(empty, { permits: 2 });
    s = apply(s, granted(decideAcquire(s, node('a'), T0)));
    s = apply(s, granted(decideAcquire(s, node('b'), T0 + 1)));
    const lowered = edited(s, { permits: 1 });
    expect(granted(decideAcquire(lowered, node('a'), T0 + 2)).outcome).toBe('refreshed');
    const d = decideAcquire(lowered, node('b'), T0 + 2);
    expect(d).toMatchObject({ outcome: 'denied', reason: DenyReason.OVER_CAPACITY });
    expect(d.next?.permits.map((p) => p.acquirer)).toEqual(['a']);
  });

  it('withdraws a holder\'s permit when its semaphore is removed', () => {
    const s1 = apply(empty, decideAcquire(empty, node('a'), T0));
    const d = decideAcquire({ ...s1, definition: null }, node('a'), T0 + 1);
    expect(d).toMatchObject({ reason: DenyReason.UNKNOWN_SEMAPHORE, next: { permits: [] } });
  });

  it('prunes expired permits when it writes', () => {
    let s = edited(empty, { permits: 2 });
    s = apply(s, granted(decideAcquire(s, node('a'), T0)));
    s = apply(s, granted(decideAcquire(s, node('b'), T0 + 5_000)));
    const d = granted(decideAcquire(s, node('c'), T0 + 10_000));
    expect(d.next.permits.map((p) => p.acquirer)).toEqual(['b', 'c']);
  });

  it('keeps fencing tokens growing across any sequence of grants and edits', () => {
    let s = empty;
    let last = 0;
    for (let i = 0; i < 50; i++) {
      if (i % 7 === 0) s = { ...s, revision: s.revision + 1 }; // an operator edit in between
      const g = granted(decideAcquire(s, node(`n${i % 3}`), T0 + i * 10_000));
      if (g.outcome === 'granted') {
        expect(g.permit.fencingToken).toBeGreaterThan(last);
        last = g.permit.fencingToken;
      }
      s = apply(s, g);
    }
    expect(last).toBe(s.lastToken);
  });

  it('grants nothing during a recovery wait, then grants (by the clock less the skew bound)', () => {
    const rebuilt = { ...empty, graceUntil: T0 + 5_000 };
    expect(decideAcquire(rebuilt, node('a'), T0 + 5_400, 500)).toMatchObject({ reason: DenyReason.RECOVERING });
    expect(granted(decideAcquire(rebuilt, node('a'), T0 + 5_500, 500)).outcome).toBe('granted');
  });
});

describe('decideRefresh', () => {
  const s1 = apply(empty, decideAcquire(empty, node('a'), T0));

  it('refreshes the exact permit held', () => {
    const d = granted(decideRefresh(s1, node('a'), R0 + 1, T0 + 5_000));
    expect(d).toMatchObject({ outcome: 'refreshed', permit: { fencingToken: R0 + 1, expiresAt: T0 + 15_000 } });
  });

  it('denies PERMIT_LOST for a stale token, even if the holder could be granted anew', () => {
    expect(decideRefresh(s1, node('a'), R0 + 1, T0 + 10_000)).toMatchObject({ outcome: 'denied', reason: DenyReason.PERMIT_LOST });
    expect(decideRefresh(s1, node('a'), 42, T0 + 1)).toMatchObject({ reason: DenyReason.PERMIT_LOST });
  });

  it('applies the definition checks before the token check', () => {
    expect(decideRefresh(edited(s1, { permits: 0 }), node('a'), R0 + 1, T0 + 1)).toMatchObject({ reason: DenyReason.PAUSED });
  });
});

describe('decideRelease', () => {
  const s1 = apply(empty, decideAcquire(empty, node('a'), T0));

  it('removes the holder\'s permit', () => {
    expect(decideRelease(s1, node('a'), R0 + 1, T0 + 100)).toMatchObject({ outcome: 'released', next: { permits: [], lastToken: R0 + 1 } });
  });

  it('never removes another holder\'s permit', () => {
    const s2 = apply(s1, granted(decideAcquire(s1, node('b'), T0 + 10_000)));
    const d = decideRelease(s2, node('a'), R0 + 1, T0 + 10_001);
    expect(d.outcome).toBe('not-held');
    expect(d.next?.permits ?? s2.permits).toEqual(s2.permits);
    expect(decideRelease(s2, node('a'), R0 + 2, T0 + 10_001).outcome).toBe('not-held');
  });

  it('keeps the permit until lockAtLeastFor, marked released, and then nobody refreshes it', () => {
    const d = decideRelease(s1, node('a'), R0 + 1, T0 + 100, T0 + 3_000);
    expect(d).toMatchObject({ outcome: 'shortened' });
    expect(d.next?.permits[0]).toMatchObject({ expiresAt: T0 + 3_000, released: true });
    const kept = apply(s1, d);
    expect(decideAcquire(kept, node('a'), T0 + 2_000)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(decideRefresh(kept, node('a'), R0 + 1, T0 + 2_000)).toMatchObject({ reason: DenyReason.PERMIT_LOST });
    // once it lapsed (plus the skew bound) any node, this one included, wins a new grant with a larger token
    expect(granted(decideAcquire(kept, node('b'), T0 + 3_500, 500)).permit.fencingToken).toBeGreaterThan(kept.revision);
  });

  it('never extends a permit when lockAtLeastFor reaches past its expiry', () => {
    const d = decideRelease(s1, node('a'), R0 + 1, T0 + 100, T0 + 60_000);
    expect(d.next?.permits[0]).toMatchObject({ expiresAt: T0 + 10_000, released: true });
  });

  it('reports an expired permit as not held and cleans it up', () => {
    expect(decideRelease(s1, node('a'), R0 + 1, T0 + 10_000)).toMatchObject({ outcome: 'not-held', next: { permits: [] } });
  });
});

describe('decideRevoke', () => {
  const s1 = apply(empty, decideAcquire(empty, node('a'), T0));

  it('marks the permit revoked but keeps its slot taken until its holder lets go or it expires', () => {
    const d = decideRevoke(s1, R0 + 1, T0 + 100);
    expect(d).toMatchObject({ outcome: 'revoked' });
    const revoked = apply(s1, d);
    expect(revoked.permits[0].revokedAt).toBe(T0 + 100);
    expect(decideAcquire(revoked, node('b'), T0 + 200)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(granted(decideAcquire(revoked, node('b'), T0 + 10_000)).outcome).toBe('granted');
  });

  it('tells the holder, whose own next decision withdraws it', () => {
    const revoked = apply(s1, decideRevoke(s1, 'all', T0 + 100));
    expect(judgeHeld(revoked, node('a'), R0 + 1, T0 + 150)).toMatchObject({ reason: DenyReason.PERMIT_REVOKED });
    const d = decideAcquire(revoked, node('a'), T0 + 150);
    expect(d).toMatchObject({ reason: DenyReason.PERMIT_REVOKED, next: { permits: [] } });
    expect(granted(decideAcquire(apply(revoked, d), node('b'), T0 + 200)).permit.fencingToken).toBeGreaterThan(R0 + 1);
  });

  it('finds nothing to revoke for an unknown token', () => {
    expect(decideRevoke(s1, 7, T0)).toMatchObject({ outcome: 'not-held' });
  });
});

describe('clock-skew bound', () => {
  const skew = 500;
  const s1 = apply(empty, decideAcquire(empty, node('a'), T0, skew));
  const token = s1.permits[0].fencingToken;

  it('counts another holder\'s permit as live until expiry plus the bound', () => {
    expect(decideAcquire(s1, node('b'), T0 + 10_000, skew)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(decideAcquire(s1, node('b'), T0 + 10_499, skew)).toMatchObject({ reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(granted(decideAcquire(s1, node('b'), T0 + 10_500, skew)).permit.acquirer).toBe('b');
  });

  it('lets the holder refresh inside the window, since no one else can have taken it', () => {
    expect(granted(decideRefresh(s1, node('a'), token, T0 + 10_200, skew)).permit.expiresAt).toBe(T0 + 20_200);
  });

  it('releases a permit still inside the window', () => {
    expect(decideRelease(s1, node('a'), token, T0 + 10_200, 0, skew)).toMatchObject({ outcome: 'released' });
  });
});

describe('seedRevision', () => {
  it('starts above the clock in microseconds and above any revision seen', () => {
    expect(seedRevision(T0)).toBe(T0 * 1000);
    expect(seedRevision(T0, T0 * 1000 + 5)).toBe(T0 * 1000 + 6);
    expect(Number.isSafeInteger(seedRevision(Date.UTC(2200, 0, 1)))).toBe(true);
  });
});
