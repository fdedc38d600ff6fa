import { DenyReason } from '../../lib/permits/deny-reason';
import { decideAcquire, decideRefresh, decideRelease, decideRevoke } from '../../lib/permits/permit.rules';
import type { GrantDecision, NextPermits, PermitDecision } from '../../lib/permits/decision';
import type { Holder } from '../../lib/permits/permit';
import { seedRevision, type SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { validateDefinition } from '../../lib/permits/definition.validator';

/**
 * "Since when was nobody holding it", as a fresh grant reports it (missed runs): the latest end of any earlier
 * permit, by expiry or by removal, or the end of a recovery wait; nothing while another permit is live or when the
 * semaphore was never held. Every bound may err late, never early.
 */
const T0 = 1_700_000_000_000;
const DURATION = 10_000;
const def = (over: Partial<Parameters<typeof validateDefinition>[0]> = {}) =>
  validateDefinition({ name: 'billing', permits: 1, duration: DURATION, ...over });
const node = (acquirer: string): Holder => ({ acquirer, group: 'production', instance: `${acquirer}/1` });
const empty = (over: Parameters<typeof def>[0] = {}): SemaphoreEntry => ({
  revision: seedRevision(T0),
  writeId: '',
  definition: def(over),
  lastToken: 0,
  permits: [],
});
const edited = (entry: SemaphoreEntry, over: Parameters<typeof def>[0]): SemaphoreEntry => ({ ...entry, definition: def(over) });

/** Applies a decision's write the way the engine does (a missing `vacatedAt` keeps the entry's). */
function apply(entry: SemaphoreEntry, decision: { next?: NextPermits }): SemaphoreEntry {
  if (!decision.next) throw new Error('expected a write');
  const { revision, ...rest } = decision.next;
  return { ...entry, writeId: 'w', ...rest, revision: Math.max(entry.revision + 1, revision ?? 0) };
}
function grant(d: PermitDecision): GrantDecision {
  if (d.outcome === 'denied') throw new Error(`expected a grant, got ${d.reason}: ${d.message}`);
  return d;
}
const acquire = (entry: SemaphoreEntry, who: string, at: number, skew = 0) => apply(entry, grant(decideAcquire(entry, node(who), at, skew)));

describe('vacantSince on a fresh grant', () => {
  const table: Array<[string, () => PermitDecision, number | undefined]> = [
    ['never held: nothing was missed', () => decideAcquire(empty(), node('b'), T0), undefined],
    [
      'an expired holder: its expiry, taken as is (its own start check already allowed for skew)',
      () => decideAcquire(acquire(empty(), 'a', T0), node('b'), T0 + 25_000, 500),
      T0 + DURATION,
    ],
    [
      'a released holder: the release, plus the skew bound (the releaser\'s clock may lag ours)',
      () => {
        const held = acquire(empty(), 'a', T0, 500);
        const released = apply(held, decideRelease(held, node('a'), held.lastToken, T0 + 3_000, 0, 500));
        return decideAcquire(released, node('b'), T0 + 7_000, 500);
      },
      T0 + 3_500,
    ],
    [
      'a revoked holder that let go when told: when it let go',
      () => {
        const held = acquire(empty(), 'a', T0);
        const revoked = apply(held, decideRevoke(held, 'all', T0 + 1_000));
        const letGo = decideAcquire(revoked, node('a'), T0 + 2_000);
        expect(letGo).toMatchObject({ outcome: 'denied', reason: DenyReason.PERMIT_REVOKED });
        return decideAcquire(apply(revoked, letGo), node('b'), T0 + 6_000);
      },
      T0 + 2_000,
    ],
    [
      'a revoked holder never told: its expiry',
      () => {
        const held = acquire(empty(), 'a', T0);
        return decideAcquire(apply(held, decideRevoke(held, 'all', T0 + 1_000)), node('b'), T0 + 12_000);
      },
      T0 + DURATION,
    ],
    [
      'a holder the definition no longer admits (paused, then resumed): when it withdrew',
      () => {
        const held = acquire(empty(), 'a', T0);
        const paused = edited(held, { permits: 0 });
        const withdrawn = apply(paused, decideAcquire(paused, node('a'), T0 + 2_000));
        return decideAcquire(edited(withdrawn, { permits: 1 }), node('b'), T0 + 4_000);
      },
      T0 + 2_000,
    ],
    [
      'lowered permits: the withdrawn newer holder and the released older one, whichever ended last',
      () => {
        const two = acquire(acquire(empty({ permits: 2 }), 'a', T0), 'b', T0 + 1);
        const lowered = edited(two, { permits: 1 });
        const over = decideAcquire(lowered, node('b'), T0 + 2_000);
        expect(over).toMatchObject({ reason: DenyReason.OVER_CAPACITY, next: { vacatedAt: T0 + 2_000 } });
        const one = apply(lowered, over);
        const tokenOfA = two.permits.find((p) => p.acquirer === 'a')!.fencingToken;
        const released = apply(one, decideRelease(one, node('a'), tokenOfA, T0 + 2_500));
        return decideAcquire(released, node('c'), T0 + 3_000);
      },
      T0 + 2_500,
    ],
    [
      'a rebuilt entry (data lost): the end of the recovery wait, plus the skew bound',
      () => decideAcquire({ ...empty(), graceUntil: T0 + 5_000, rebuilt: { lostSince: T0, fromRevision: 0 } }, node('b'), T0 + 8_000, 500),
      T0 + 5_500,
    ],
    [
      'two permits, the other still live: someone could run',
      () => decideAcquire(acquire(empty({ permits: 2 }), 'a', T0), node('b'), T0 + 1_000),
      undefined,
    ],
    [
      'two permits, one lapsed and one still live: someone could run',
      () => {
        const two = acquire(acquire(empty({ permits: 2 }), 'a', T0), 'c', T0 + 8_000);
        return decideAcquire(two, node('b'), T0 + 12_000);
      },
      undefined,
    ],
    [
      'a removal seen by a clock ahead of ours: never after the grant itself',
      () => decideAcquire({ ...empty(), vacatedAt: T0 + 60_000 }, node('b'), T0 + 1_000, 500),
      T0 + 1_000,
    ],
  ];

  it.each(table)('%s', (_, decide, expected) => {
    const decision = grant(decide());
    expect(decision.outcome).toBe('granted');
    expect(decision.vacantSince).toBe(expected);
  });
});

describe('vacatedAt: what a removal remembers', () => {
  it('takes the latest end of what a release drops (a lapsed permit ends at its expiry), and never goes back', () => {
    const two = acquire(acquire(empty({ permits: 2 }), 'a', T0), 'b', T0 + 9_000);
    // At T0 + 12 s, a's permit has lapsed and b releases: b ends now, a at its expiry.
    expect(decideRelease(two, node('b'), two.lastToken, T0 + 12_000).next?.vacatedAt).toBe(T0 + 12_000);
    const ahead = { ...two, vacatedAt: T0 + 60_000 };
    expect(decideRelease(ahead, node('b'), two.lastToken, T0 + 12_000).next?.vacatedAt).toBe(T0 + 60_000);
  });

  it('records a lapsed permit dropped by its late release at its expiry, not at the release', () => {
    const held = acquire(empty(), 'a', T0);
    expect(decideRelease(held, node('a'), held.lastToken, T0 + 30_000)).toMatchObject({ outcome: 'not-held', next: { permits: [], vacatedAt: T0 + DURATION } });
  });

  it('is left alone by refreshes and grants (no work on the hot path)', () => {
    const held = { ...acquire(empty(), 'a', T0), vacatedAt: T0 - 1 };
    const refresh = grant(decideRefresh(held, node('a'), held.lastToken, T0 + 5_000));
    expect(refresh.next).not.toHaveProperty('vacatedAt');
    expect(refresh.vacantSince).toBeUndefined();
    expect(grant(decideAcquire(held, node('a'), T0 + 5_000))).not.toHaveProperty('vacantSince');
    expect(apply(held, refresh).vacatedAt).toBe(T0 - 1);
    expect(grant(decideAcquire(held, node('b'), T0 + 20_000)).next).not.toHaveProperty('vacatedAt');
  });
});
