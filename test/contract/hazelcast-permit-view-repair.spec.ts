import { systemClock } from '../../lib/core/clock';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { encodeEntry } from '../../lib/permits/semaphore-entry.codec';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { imapOf, watchedOf } from '../support/permit-records';

/**
 * The permit view's repairs, on a real member, with a write's answer held back by wrapping the store's own map (as the
 * client holds one it retries during a migration, or one whose connection dropped): none of them may leave the view
 * answering with a value the store no longer has, and a dropped write's missed events must be made up for.
 */
describe('the permit view against a real member', () => {
  const raw = useRawClient();
  let store: HazelcastPermitStore;
  let mapPrefix: string;

  beforeEach(async () => {
    mapPrefix = uniquePrefix('view-repair');
    store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
    await store.connect({ clock: systemClock });
    await new SemaphoreAdmin(store, systemClock).put({ name: 'billing', duration: '10s' });
  });
  afterEach(async () => {
    await store.close();
  });

  const storeMap = () => imapOf(store);
  const outside = async () => raw().getMap<string, string>(`${mapPrefix}.semaphores`);
  const nextOf = async (): Promise<{ before: { raw: string | null; entry: SemaphoreEntry | undefined }; next: SemaphoreEntry }> => {
    const before = await store.read('billing');
    return { before, next: { ...before.entry!, revision: before.entry!.revision + 1, writeId: store.writeId() } };
  };
  /** Whether the store has nothing under billing now (read by another client). */
  const goneFromStore = async () => (await (await outside()).get('billing')) === null;

  it('does not put back a value removed while its write was in flight (the removal heard and read before the answer)', async () => {
    const { before, next } = await nextOf();
    const map = storeMap();
    const replaceIfSame = map.replaceIfSame.bind(map);
    map.replaceIfSame = (async (key: string, expected: string, value: string) => {
      const landed = await replaceIfSame(key, expected, value);
      // An outside client removes the entry after the write landed; this node hears it and reads the absence back,
      // all before the write's answer reaches it.
      const calls = store.operationCount();
      await (await outside()).delete(key);
      await eventually('the removal heard and read back', () => store.operationCount() > calls && store.peek('billing')?.raw === null);
      return landed;
    }) as typeof map.replaceIfSame;
    expect(await store.compareAndSet('billing', before, next, { timeoutMs: 5_000 })).toBe(true);
    expect(await goneFromStore()).toBe(true);
    expect(store.peek('billing')?.raw).not.toBe(encodeEntry(next));
    await eventually('the view agrees with the store', () => store.peek('billing')?.raw === null);
  });

  it('does not put back a value removed after its write landed past the deadline', async () => {
    const { before, next } = await nextOf();
    const map = storeMap();
    const replaceIfSame = map.replaceIfSame.bind(map);
    let settled = false;
    map.replaceIfSame = (async (key: string, expected: string, value: string) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const landed = await replaceIfSame(key, expected, value);
      await (await outside()).delete(key);
      await eventually('the removal heard', () => store.peek('billing')?.raw === null);
      settled = true;
      return landed;
    }) as typeof map.replaceIfSame;
    await expect(store.compareAndSet('billing', before, next, { timeoutMs: 50 })).rejects.toThrow(StoreTimeoutError);
    await eventually('the late answer came', () => settled);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await goneFromStore()).toBe(true);
    await eventually('the view agrees with the store', () => store.peek('billing')?.raw === null);
    expect(store.peek('billing')?.raw).not.toBe(encodeEntry(next));
  });

  it('re-reads its view after a write whose connection dropped, even when the settle read finds the write landed', async () => {
    const { before, next } = await nextOf();
    const map = storeMap();
    const replaceIfSame = map.replaceIfSame.bind(map);
    map.replaceIfSame = (async (key: string, expected: string, value: string) => {
      const landed = await replaceIfSame(key, expected, value);
      // An edit by another node whose event this node never gets (it came while the connection was down).
      throw Object.assign(new Error('connection reset under the call'), { landed });
    }) as typeof map.replaceIfSame;
    const calls = store.operationCount();
    expect(await store.compareAndSet('billing', before, next, { timeoutMs: 5_000 })).toBe(true);
    map.replaceIfSame = replaceIfSame;
    // Events may have been missed in the drop: the view is distrusted until every entry is read again.
    await eventually('the view re-read after the drop', () => store.operationCount() >= calls + 3 && store.isConnected());
  });

  it('reads an entry it heard removed as lost, before any renewal of its canary has landed', async () => {
    // Every node's renewal of the canary held back: only what this node heard can say the entry went.
    const map = watchedOf(store).map();
    map.markLost = () => new Promise<void>(() => undefined);
    const heardAt = Date.now();
    await (await outside()).delete('billing');
    await eventually('the removal heard', () => store.peek('billing')?.raw === null);
    const read = await store.read('billing');
    expect(read.raw).toBeNull();
    expect(read.lostSince).toBeGreaterThanOrEqual(heardAt - 1_000);
  });

  it('reads an entry as lost that went while no node that knew it was there to hear it', async () => {
    await eventually('the note that billing has an entry', async () => (await raw().getMap<string, string>(`${mapPrefix}.semaphore-keys`)).containsKey('billing'));
    // Every node that knew the entry is gone (cut off, stopped); then the map is cleared, unheard by anyone.
    await store.close();
    const before = Date.now();
    await (await outside()).clear();
    store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
    await store.connect({ clock: systemClock });
    // A node that never saw the entry: its partition's canary is intact, and nobody marked it lost.
    const read = await store.read('billing');
    expect(read.raw).toBeNull();
    expect(read.lostSince).toBeGreaterThanOrEqual(before);
  });

  it('makes an entry removed from outside count as lost, so whoever rebuilds it waits out its permits', async () => {
    const other = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
    await other.connect({ clock: systemClock });
    try {
      await (await outside()).delete('billing');
      // The node that knew the entry heard the removal; a node that never saw it finds it absent and lost since then.
      await eventually('the removal counted as a loss', async () => (await other.read('billing')).lostSince !== undefined);
    } finally {
      await other.close();
    }
  });
});
