import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import * as codec from '../../lib/permits/semaphore-entry.codec';
import { SemaphoreView } from '../../lib/permits/semaphore.view';

function entry(name: string, revision: number): SemaphoreEntry {
  return {
    definition: { name, permits: 1, durationMs: 60_000, groupPattern: '.*', acquirerPattern: '.*' },
    revision,
    lastToken: revision,
    permits: [],
    writeId: `w${revision}`,
  } as unknown as SemaphoreEntry;
}

const raw = (name: string, revision: number) => codec.encodeEntry(entry(name, revision));

/**
 * A node hears every write to every semaphore, but decides on few of them: a value no listener wants is kept as
 * it came, its revision read from its first bytes, and decoded only when a decision, a listing or a rebuild asks
 * for it. Everything the view answered before it answers the same, only later.
 */
describe('SemaphoreView, lazy decoding', () => {
  let decodes: jest.SpyInstance;
  beforeEach(() => {
    decodes = jest.spyOn(codec, 'decodeEntry');
  });
  afterEach(() => decodes.mockRestore());

  it('keeps a value nobody listens for undecoded until it is asked for, then decodes it once', () => {
    const view = new SemaphoreView();
    for (let revision = 1; revision <= 5; revision++) view.observe('billing', raw('billing', revision));
    expect(decodes).not.toHaveBeenCalled();
    expect(view.peek('billing')).toMatchObject({ raw: raw('billing', 5), entry: entry('billing', 5) });
    expect(view.peek('billing')?.entry?.revision).toBe(5);
    expect(view.entries()).toEqual([{ name: 'billing', entry: entry('billing', 5) }]);
    expect(decodes).toHaveBeenCalledTimes(1);
  });

  it('decodes at once, and tells, for a listener that wants the name; the others stay undecoded', () => {
    const view = new SemaphoreView();
    const heard: Array<[string, number | undefined]> = [];
    view.subscribe((name, e) => heard.push([name, e?.revision]), (name) => name === 'billing');
    view.observe('billing', raw('billing', 3));
    view.observe('payroll', raw('payroll', 4));
    expect(decodes.mock.calls.map(([name]) => name)).toEqual(['billing']);
    view.observe('payroll', raw('payroll', 5), entry('payroll', 5)); // decoded already (its own write): still not told
    expect(heard).toEqual([['billing', 3]]);
  });

  it('ignores a late value by the revision its first bytes give, undecoded or not', () => {
    const view = new SemaphoreView();
    view.observe('billing', raw('billing', 5));
    view.observe('billing', raw('billing', 4));
    expect(view.peek('billing')?.entry?.revision).toBe(5);
    view.observe('payroll', raw('payroll', 5));
    view.observe('payroll', raw('payroll', 4), entry('payroll', 4));
    expect(view.peek('payroll')?.entry?.revision).toBe(5);
  });

  it('remembers a value it kept undecoded when the entry is lost, and when the view is cleared', () => {
    const view = new SemaphoreView();
    view.observe('billing', raw('billing', 7));
    view.observe('billing', null); // lost with its partition
    expect(view.remembered('billing')?.revision).toBe(7);
    expect(view.peek('billing')).toMatchObject({ raw: null, entry: undefined });
    view.observe('payroll', raw('payroll', 8));
    view.clear();
    expect(view.remembered('payroll')?.revision).toBe(8);
  });

  it('reports a value that starts as the library writes but cannot be read, once somebody needs it', () => {
    const unreadable: string[] = [];
    const view = new SemaphoreView(undefined, (name, reason) => unreadable.push(`${name}: ${reason}`));
    expect(view.observe('billing', '{"v":2,"revision":9,"writeId":3}')).toBeUndefined();
    expect(unreadable).toEqual([]);
    expect(view.peek('billing')).toBeUndefined();
    expect(unreadable).toEqual([expect.stringContaining('billing')]);
    // A readable value after it is taken, though its revision is lower: an unreadable value orders nothing.
    view.observe('billing', raw('billing', 2), entry('billing', 2));
    expect(view.peek('billing')?.entry?.revision).toBe(2);
  });
});

describe('encodedRevision', () => {
  it('reads the revision from the first bytes of a value this library wrote, and nothing else', () => {
    expect(codec.encodedRevision(raw('billing', 1_795_504_538_299))).toBe(1_795_504_538_299);
    expect(codec.encodedRevision('{"v":3,"revision":12,"writeId":"x"}')).toBe(12);
    for (const value of ['{"v":1,"revision":12,', '{"revision":12,"v":2}', '{"v":2,"revision":012,', '{"v":2,"revision":-1,', '{"v":2,"revision":1e3,', '{"v":2,"revision":12', '{"v":2,"revision":99999999999999999,', 'plain']) {
      expect(codec.encodedRevision(value)).toBeUndefined();
    }
  });
});
