import { RecentMap } from '../../lib/core/recent-map';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { encodeEntry } from '../../lib/permits/semaphore-entry.codec';
import { ABSENT_NAMES_CAP, SemaphoreView } from '../../lib/permits/semaphore.view';

function entry(name: string, revision: number): SemaphoreEntry {
  return {
    definition: { name, permits: 1, durationMs: 60_000, groupPattern: '.*', acquirerPattern: '.*' },
    revision,
    lastToken: revision,
    permits: [],
    writeId: `w${revision}`,
  } as unknown as SemaphoreEntry;
}

/**
 * The view keeps per-name state only for names the store held an entry under; names confirmed absent that never
 * had one (callers may build them from input) are kept in a bounded list. What the safety rules need of lost
 * entries (that they are gone, and the newest entry seen, for rebuilds) is never among what is forgotten.
 */
describe('SemaphoreView bounds', () => {
  it('keeps a bounded number of names that were only ever absent, the most recent ones', () => {
    const view = new SemaphoreView();
    const names = 10 * ABSENT_NAMES_CAP;
    for (let i = 0; i < names; i++) view.observe(`input-${i}`, null);
    let kept = 0;
    for (let i = 0; i < names; i++) if (view.peek(`input-${i}`)) kept++;
    expect(kept).toBeGreaterThanOrEqual(ABSENT_NAMES_CAP);
    expect(kept).toBeLessThanOrEqual(2 * ABSENT_NAMES_CAP);
    // The latest are known to be absent: a local decision can still deny them without a round trip.
    expect(view.peek(`input-${names - 1}`)).toMatchObject({ entry: undefined, raw: null });
    expect(view.peek('input-0')).toBeUndefined();
  });

  it('never forgets that an entry it saw was lost, nor the entry, however many unknown names follow', () => {
    const view = new SemaphoreView();
    const heard: Array<[string, SemaphoreEntry | undefined]> = [];
    view.subscribe((name, e) => heard.push([name, e]));
    view.observe('billing', encodeEntry(entry('billing', 7)));
    view.observe('billing', null); // lost with its partition
    for (let i = 0; i < 10 * ABSENT_NAMES_CAP; i++) view.observe(`input-${i}`, null);
    // Still absent in the view (a holder's lease hears of it through newsAgainst), still remembered for a rebuild.
    expect(view.peek('billing')).toMatchObject({ entry: undefined, raw: null });
    expect(view.remembered('billing')?.revision).toBe(7);
    expect(heard.filter(([name]) => name === 'billing').map(([, e]) => e?.revision)).toEqual([7, undefined]);
  });

  it('tells listeners when an unreadable value vanishes, and when a name first turns out absent, but not on every re-read', () => {
    const view = new SemaphoreView();
    const heard: string[] = [];
    view.subscribe((name, e) => heard.push(`${name}:${e ? e.revision : 'none'}`));
    expect(view.observe('corrupt', '{not json')).toBeDefined();
    view.observe('corrupt', null);
    view.observe('unknown', null);
    view.observe('unknown', null);
    view.observe('unknown', encodeEntry(entry('unknown', 1)));
    expect(heard).toEqual(['corrupt:none', 'corrupt:none', 'unknown:none', 'unknown:1']);
    expect(view.peek('unknown')?.entry?.revision).toBe(1);
  });
});

describe('RecentMap', () => {
  it('keeps at least the last `cap` keys used and never more than twice as many', () => {
    const map = new RecentMap<number, number>(100);
    let most = 0;
    for (let i = 0; i < 10_000; i++) most = Math.max(most, map.set(i, i).size);
    expect(most).toBeLessThanOrEqual(200);
    for (let i = 9_900; i < 10_000; i++) expect(map.get(i)).toBe(i);
    expect(map.has(0)).toBe(false);
  });

  it('counts a read as a use: a key read often stays', () => {
    const map = new RecentMap<string, number>(10);
    map.set('hot', 1);
    for (let i = 0; i < 1000; i++) {
      map.set(`cold-${i}`, i);
      expect(map.get('hot')).toBe(1);
    }
    expect(map.delete('hot')).toBe(true);
    expect(map.has('hot')).toBe(false);
  });

  it('refuses a cap that is not a positive integer', () => {
    expect(() => new RecentMap(0)).toThrow('RecentMap cap must be a positive integer, got 0');
  });
});
