import { CANARY_SPREAD_MS, canaryEvidence } from '../../lib/backends/hazelcast/hazelcast-canary.rules';
import { earlierLifeOf, NOTE_MARGIN_MS, noteEvidence, withoutRecoveryWait } from '../../lib/permits/new-cluster.rules';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';

const definition = { name: 'billing', permits: 1, durationMs: 600_000, groupPattern: '.*', acquirerPattern: '.*' };
const waiting: SemaphoreEntry = {
  revision: 5_000_000, writeId: 'w', definition, lastToken: 0, permits: [],
  graceUntil: 1_000_000, rebuilt: { lostSince: 400_000, fromRevision: 0 },
};

describe('declaring a cluster new: what shows an earlier life', () => {
  it('an entry created waiting by a node that remembered nothing shows none, and its wait can be lifted', () => {
    expect(earlierLifeOf('gatekeeper "billing"', waiting)).toBeUndefined();
    expect(withoutRecoveryWait(waiting)).toEqual({ revision: 5_000_001, definition, lastToken: 0, permits: [] });
  });

  it('a permit ever granted, or a rebuild from a remembered entry, is an earlier life', () => {
    expect(earlierLifeOf('g "billing"', { ...waiting, lastToken: 3 })?.reason).toContain('last fencing token 3');
    expect(earlierLifeOf('g "billing"', { ...waiting, rebuilt: { lostSince: 1, fromRevision: 7 } })?.reason).toContain('knew it before');
  });

  it('a note that a semaphore had an entry is an earlier life beside a missing entry, or one rebuilt after a later loss', () => {
    const { graceUntil: _g, rebuilt: _r, ...plain } = waiting;
    expect(noteEvidence('g "billing"', 100, undefined)?.reason).toContain('entry is gone');
    // Cleared while its nodes were cut off: a newcomer rebuilt it after a loss it read long after the note.
    expect(noteEvidence('g "billing"', 400_000 - NOTE_MARGIN_MS - 1, waiting)?.reason).toContain('before the loss');
    // A first start: the first creator's entry waits for the canaries' loss, and its note comes just after.
    expect(noteEvidence('g "billing"', 400_500, waiting)).toBeUndefined();
    expect(noteEvidence('g "billing"', 400_000 - NOTE_MARGIN_MS + 1, waiting)).toBeUndefined();
    expect(noteEvidence('g "billing"', 100, plain)).toBeUndefined();
  });

  it('an entry with no wait has nothing to lift', () => {
    const { graceUntil: _g, rebuilt: _r, ...plain } = waiting;
    expect(withoutRecoveryWait(plain)).toBeUndefined();
  });

  it('a wait an operator set on an unreadable entry (a reset) is an earlier life: it protects whoever held it', () => {
    const { rebuilt: _r, ...reset } = waiting;
    expect(earlierLifeOf('g "billing"', reset)?.reason).toContain('reset it');
  });

  it('canaries first written together are one first start; far apart, partitions were lost later', () => {
    const stale = (createdAt: number) => ({ createdAt, fresh: false });
    expect(canaryEvidence([stale(1000), stale(1200), stale(1000 + CANARY_SPREAD_MS)])).toEqual([]);
    expect(canaryEvidence([stale(1000), stale(1001 + CANARY_SPREAD_MS)])[0]?.reason).toContain('apart');
    expect(canaryEvidence([])).toEqual([]);
  });

  it('a canary first written after the cluster was declared new is a partition lost since; one older is a declaration cut short', () => {
    expect(canaryEvidence([{ createdAt: 5000, fresh: true }, { createdAt: 5001, fresh: false }])[0]?.reason).toContain('after the cluster was declared new');
    expect(canaryEvidence([{ createdAt: 5000, fresh: true }, { createdAt: 4000, fresh: false }])).toEqual([]);
  });
});
