import { RecordView, type RecordCodec } from '../../lib/store/record-view';

interface Doc {
  revision: number;
  body: string;
}

const codec: RecordCodec<Doc> = {
  decode: (key, raw) => {
    const doc = JSON.parse(raw) as Doc;
    if (typeof doc.revision !== 'number') throw new Error(`${key}: no revision`);
    return doc;
  },
  revision: (doc) => doc.revision,
};
const raw = (revision: number, body = `r${revision}`) => JSON.stringify({ revision, body });

/**
 * The one event-fed view every capability keeps: each rule below is what keeps it from going back, or from putting
 * back a value the store no longer has. Each case is the order of answers and events that broke a view without it.
 */
describe('RecordView', () => {
  it('never goes back: a late event of an older revision is ignored, an absence always counts', () => {
    const view = new RecordView(codec);
    view.observe('a', raw(3));
    view.heard('a', raw(2));
    expect(view.peek('a')?.entry?.revision).toBe(3);
    view.observe('a', null);
    expect(view.peek('a')).toMatchObject({ entry: undefined, raw: null });
    expect(view.remembered('a')?.revision).toBe(3);
  });

  it('does not undo with a listing what the feed changed after the listing began', () => {
    const view = new RecordView(codec);
    const mark = view.changeMark();
    // The listing is read, then the record is created and its event heard, then the listing's answer arrives.
    view.heard('new', raw(1));
    const { gone } = view.observeListing([{ key: 'other', value: raw(1) }], mark);
    expect(gone).toEqual([]);
    expect(view.peek('new')?.entry?.revision).toBe(1);
    // A record the view held before the listing began and the listing lacks is gone.
    const later = view.changeMark();
    expect(view.observeListing([{ key: 'other', value: raw(1) }], later).gone).toEqual(['new']);
    expect(view.peek('new')?.raw).toBeNull();
  });

  it('finds gone only what it held when the listing began: not a record this node wrote or read meanwhile', () => {
    const view = new RecordView(codec);
    const mark = view.changeMark();
    // While the listing is out, this node creates a record (its own writes bring no event) and reads another.
    const own = view.beginWrite('created', raw(1), { revision: 1, body: 'r1' });
    expect(view.landed('created', own)).toBe(true);
    view.endWrite('created', own);
    view.observeRead('read', raw(1), view.removalMark());
    expect(view.observeListing([], mark).gone).toEqual([]);
    expect(view.peek('created')?.entry?.revision).toBe(1);
    expect(view.peek('read')?.entry?.revision).toBe(1);
  });

  it('keeps a key absent against old revisions when its revisions outlive its records (tombstones)', () => {
    const view = new RecordView({ ...codec, revisionsOutliveRecords: true });
    view.observe('x', raw(5));
    view.observeListing([], view.changeMark()); // removed by hand, its event lost: a listing finds it gone
    view.heard('x', raw(5)); // the late event of the value the listing already showed
    expect(view.peek('x')?.raw).toBeNull();
    view.heard('x', raw(6)); // the id comes back, above its last revision
    expect(view.peek('x')?.entry?.revision).toBe(6);
    // Without the option (permits: after a loss, whatever the store has next is taken in).
    const plain = new RecordView(codec);
    plain.observe('x', raw(5));
    plain.observe('x', null);
    plain.heard('x', raw(5));
    expect(plain.peek('x')?.entry?.revision).toBe(5);
  });

  it('does not take in a read or a listing whose answer started before a removal heard', () => {
    const view = new RecordView(codec);
    view.observe('a', raw(1));
    const mark = view.removalMark();
    view.removed('a');
    view.observeRead('a', raw(1), mark);
    expect(view.peek('a')?.raw).toBeNull();
    const listing = view.changeMark();
    view.removed('a');
    view.observeListing([{ key: 'a', value: raw(1) }], listing);
    expect(view.peek('a')?.raw).toBeNull();
  });

  it('does not let a write\'s answer put back a value when an absence was seen while it was in flight', () => {
    const view = new RecordView(codec);
    view.observe('a', raw(1));
    const own = view.beginWrite('a', raw(2), { revision: 2, body: 'r2' });
    // The removal is heard while the write is out: the caller must read again, not trust the answer.
    expect(view.removed('a')).toBe('read-again');
    view.observe('a', null); // the read again found it absent
    expect(view.landed('a', own)).toBe(false);
    view.endWrite('a', own);
    expect(view.peek('a')?.raw).toBeNull();
    // Without an absence, the answer is taken in.
    const next = view.beginWrite('a', raw(3), { revision: 3, body: 'r3' });
    expect(view.landed('a', next)).toBe(true);
    view.endWrite('a', next);
    expect(view.peek('a')?.entry?.revision).toBe(3);
  });

  it('marks a write in flight on a key a listing lacks, so its late answer puts nothing back', () => {
    const view = new RecordView(codec);
    const own = view.beginWrite('a', raw(1), { revision: 1, body: 'r1' });
    view.observeListing([], view.changeMark());
    expect(view.landed('a', own)).toBe(false);
  });

  it('asks to read again on a removal of a value this node wrote (the removal may be of the value before it)', () => {
    const view = new RecordView(codec);
    view.observe('a', raw(4, 'mine'));
    expect(view.removed('a', (value) => value.includes('mine'))).toBe('read-again');
    expect(view.peek('a')?.entry?.revision).toBe(4);
    expect(view.removed('a', () => false)).toBe('absent');
    expect(view.peek('a')?.raw).toBeNull();
  });

  it('ages what it knows on the monotonic clock, and a re-read confirms it again', () => {
    let now = 0;
    const view = new RecordView(codec, () => now);
    view.observe('a', raw(1));
    now = 500;
    expect(view.peek('a')?.ageMs).toBe(500);
    view.observe('a', raw(1));
    expect(view.peek('a')?.ageMs).toBe(0);
  });
});
