import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { systemClock } from '../../lib/core/clock';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { RecordMap, StoredRecord } from '../../lib/store/record-map';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { SEMAPHORE_KEYS_MAP, SEMAPHORE_MAP } from '../../lib/permits/permit-record.store';
import { eventually } from '../support/eventually';
import { watchedOf } from '../support/permit-records';

/**
 * The permit view's repairs that need no member to show: a listing racing a removal, and entries that went while
 * this node heard nothing (a cleared map, lost events), which must count as lost for every node.
 */
describe('the permit view on a memory backend', () => {
  let memory: MemoryBackend;
  let store: PermitRecordStore;
  beforeEach(async () => {
    memory = new MemoryBackend();
    store = new PermitRecordStore(memory.node());
    await store.connect({ clock: systemClock });
    await new SemaphoreAdmin(store, systemClock).put({ name: 'billing', duration: '10s' });
  });
  afterEach(async () => {
    await store.close();
  });
  const storeMap = () => watchedOf(store).map();

  it('does not take a listing into the view over a removal heard while it was out', async () => {
    const map = storeMap();
    const list = map.list.bind(map);
    map.list = async (...args: Parameters<RecordMap['list']>): Promise<StoredRecord[]> => {
      const answer = await list(...args);
      // The entry goes after the listing read it, and this node hears that before the listing's answer arrives.
      memory.records.write(SEMAPHORE_MAP, 'billing', null);
      await eventually('the removal heard', () => store.peek('billing')?.raw === null);
      return answer;
    };
    const listed = await store.list();
    expect(listed.map((e) => e.name)).toEqual(['billing']); // the caller gets what the store said
    expect(store.peek('billing')?.raw ?? null).toBeNull(); // the view keeps the absence it heard
  });

  it('reads an entry as lost that went while no node that knew it was there to hear it', async () => {
    await eventually('the note that billing has an entry', () => memory.records.map(SEMAPHORE_KEYS_MAP).has('billing'));
    await store.close();
    const before = Date.now();
    memory.records.map(SEMAPHORE_MAP).delete('billing'); // no event: nobody listens
    store = new PermitRecordStore(memory.node());
    await store.connect({ clock: systemClock });
    const read = await store.read('billing');
    expect(read.raw).toBeNull();
    expect(read.lostSince).toBeGreaterThanOrEqual(before);
    // A name that never had an entry is not lost: its first creator waits for nothing.
    expect((await store.read('never')).lostSince).toBeUndefined();
  });

  it('marks an entry that went unheard as lost when a resync finds it gone, so a node that never saw it waits', async () => {
    const before = Date.now();
    // Gone without an event (a cleared map whose events were lost): only a re-read can tell.
    memory.records.map(SEMAPHORE_MAP).delete('billing');
    watchedOf(store).trust.missed('cleared');
    await eventually('the resync to find it gone', () => store.peek('billing')?.raw === null);
    const other = new PermitRecordStore(memory.node());
    await other.connect({ clock: systemClock });
    try {
      const read = await other.read('billing');
      expect(read.raw).toBeNull();
      expect(read.lostSince).toBeGreaterThanOrEqual(before);
    } finally {
      await other.close();
    }
  });
});
