import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { decideAcquire, decideRelease } from '../../lib/permits/permit.rules';
import { givesWayToIncumbents } from '../../lib/permits/incumbent.rules';
import { EntryWaits } from '../../lib/permits/entry-waits';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { DenyReason } from '../../lib/permits/deny-reason';
import { FakeClock } from '../support/fake-clock';
import type { NextPermits } from '../../lib/permits/decision';
import type { Holder } from '../../lib/permits/permit';
import { seedRevision, type SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { validateDefinition } from '../../lib/permits/definition.validator';

const T0 = 1_700_000_000_000;
const def = (over: Partial<Parameters<typeof validateDefinition>[0]> = {}) => validateDefinition({ name: 'report', permits: 1, duration: 10_000, ...over });
const node = (acquirer: string, group = 'production'): Holder => ({ acquirer, group, instance: `${acquirer}/1` });
const empty: SemaphoreEntry = { revision: seedRevision(T0), writeId: '', definition: def(), lastToken: 0, permits: [] };
const apply = (entry: SemaphoreEntry, decision: { next?: NextPermits }): SemaphoreEntry => {
  if (!decision.next) throw new Error('nothing to write');
  const { revision, ...rest } = decision.next;
  return { ...entry, writeId: 'w', ...rest, revision: Math.max(entry.revision + 1, revision ?? 0) };
};
/** `a` granted at T0 and released with a hold until T0 + 800 (release mode with lockAtLeastFor). */
function releasedWithHold(entry = empty): SemaphoreEntry {
  const grant = decideAcquire(entry, node('a'), T0);
  if (grant.outcome !== 'granted') throw new Error(grant.outcome);
  const held = apply(entry, grant);
  return apply(held, decideRelease(held, node('a'), grant.permit.fencingToken, T0 + 10, T0 + 800));
}

describe('givesWayToIncumbents: the node that released a slot with a hold takes the next tick first', () => {
  it('another node gives way once the hold is over, for one duration; the incumbent itself never does', () => {
    const entry = releasedWithHold();
    expect(givesWayToIncumbents(entry, node('b'), T0 + 1_000)).toBe(true);
    expect(givesWayToIncumbents(entry, node('a'), T0 + 1_000)).toBe(false);
    expect(givesWayToIncumbents(entry, node('b'), T0 + 800 + 10_000)).toBe(false); // the incumbent stopped ticking long ago
  });

  it('gives no head start while the slot is still held (the decision denies anyway), counting the skew bound', () => {
    const entry = releasedWithHold();
    expect(givesWayToIncumbents(entry, node('b'), T0 + 500)).toBe(false);
    expect(givesWayToIncumbents(entry, node('b'), T0 + 900, 200)).toBe(false);
    expect(givesWayToIncumbents(entry, node('b'), T0 + 1_100, 200)).toBe(true);
  });

  it('gives none for a permit that lapsed without a release: its holder died or stalled, and a takeover is never slower', () => {
    const grant = decideAcquire(empty, node('a'), T0);
    if (grant.outcome !== 'granted') throw new Error(grant.outcome);
    expect(givesWayToIncumbents(apply(empty, grant), node('b'), T0 + 10_001)).toBe(false);
  });

  it('gives none when a slot is free beyond the incumbents, or the definition no longer admits the incumbent', () => {
    const entry = releasedWithHold();
    expect(givesWayToIncumbents({ ...entry, definition: def({ permits: 2 }) }, node('b'), T0 + 1_000)).toBe(false);
    expect(givesWayToIncumbents({ ...entry, definition: def({ groupPattern: 'canary' }) }, node('b', 'canary'), T0 + 1_000)).toBe(false);
    expect(givesWayToIncumbents({ ...entry, definition: def({ permits: 0 }) }, node('b'), T0 + 1_000)).toBe(false);
    expect(givesWayToIncumbents(empty, node('b'), T0)).toBe(false);
    expect(givesWayToIncumbents(undefined, node('b'), T0)).toBe(false);
  });
});

describe('EntryWaits', () => {
  it('wakes a wait on news of its name, and the others at their deadlines, in order, on one timer', async () => {
    const waits = new EntryWaits();
    const woke: string[] = [];
    const started = performance.now();
    const all = [
      waits.next('x', 5_000).then(() => woke.push('x')),
      waits.next('y', 30).then(() => woke.push(`y ${Math.round(performance.now() - started) >= 29}`)),
      waits.next('z', 60).then(() => woke.push(`z ${Math.round(performance.now() - started) >= 59}`)),
    ];
    expect(waits.has('x')).toBe(true);
    waits.notify('x');
    await Promise.all(all);
    expect(woke).toEqual(['x', 'y true', 'z true']);
    expect(['x', 'y', 'z'].some((name) => waits.has(name))).toBe(false);
    waits.dispose();
  });

  it('wakes every wait when disposed', async () => {
    const waits = new EntryWaits();
    const started = performance.now();
    const pending = Promise.all([waits.next('x', 60_000), waits.next('x', 60_000)]);
    waits.dispose();
    await pending;
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});

describe('a local decision that gives way (memory stores, the engine production uses)', () => {
  async function twoNodes(quorum?: number) {
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const stores = [new PermitRecordStore(backend.node()), new PermitRecordStore(backend.node())];
    await Promise.all(stores.map((s) => s.connect({ clock })));
    await new SemaphoreAdmin(stores[0], clock).put({ name: 'report', duration: '10s' });
    const [a, b] = stores.map((s, i) => new PermitEngine(s, node(['a', 'b'][i]), clock, { clockSkewMs: 100, ...(quorum !== undefined && { quorum }) }));
    const first = await a.tryAcquire('report', { local: true });
    if (!first.granted) throw new Error(first.message);
    await a.release(first.permit, clock.now() + 800);
    clock.advance(1_000);
    return { clock, stores, a, b };
  }

  it('denies from the view, with no store call, when the incumbent\'s grant comes within the head start', async () => {
    const { stores, a, b } = await twoNodes();
    const before = stores[1].operationCount();
    const waiting = b.tryAcquire('report', { local: true });
    const incumbent = await a.tryAcquire('report', { local: true });
    expect(incumbent.granted).toBe(true);
    expect(await waiting).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(stores[1].operationCount()).toBe(before);
  });

  it('takes the slot by compare-and-set when no grant comes', async () => {
    const { b } = await twoNodes();
    expect(await b.tryAcquire('report', { local: true })).toMatchObject({ granted: true });
  });

  it('asks the quorum again after the wait: a cluster that shrank meanwhile grants nothing', async () => {
    const { stores, b } = await twoNodes(2);
    let members = 2;
    jest.spyOn(stores[1], 'memberCount').mockImplementation(() => members);
    const decision = b.tryAcquire('report', { local: true });
    members = 1; // during the head start
    expect(await decision).toMatchObject({ granted: false, reason: DenyReason.QUORUM_NOT_MET });
  });
});
