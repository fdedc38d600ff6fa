import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { decodeEntry, encodeEntry } from '../../lib/permits/semaphore-entry.codec';
import { FakeClock } from '../support/fake-clock';

/**
 * A store keeps the entry it just wrote in its node's view as it is, without decoding the value it sent: so every
 * entry the library writes must be exactly what decoding its encoding gives, or the writer would decide from
 * something the other nodes do not see. Every kind of write the permits make, checked.
 */
describe('entries the library writes', () => {
  it('decode to exactly themselves', async () => {
    const clock = new FakeClock();
    const store = new PermitRecordStore(new MemoryBackend());
    await store.connect({ clock });
    const written: Array<[string, SemaphoreEntry]> = [];
    const compareAndSet = store.compareAndSet.bind(store);
    store.compareAndSet = (name, expected, next, options) => {
      written.push([name, next]);
      return compareAndSet(name, expected, next, options);
    };
    const admin = new SemaphoreAdmin(store, clock);
    await admin.put({ name: 'billing', duration: '10s', permits: 2 });
    const one = new PermitEngine(store, { acquirer: 'a', group: 'production', instance: 'a/1' }, clock);
    const two = new PermitEngine(store, { acquirer: 'b', group: 'production', instance: 'b/1' }, clock);
    const first = await one.tryAcquire('billing');
    const second = await two.tryAcquire('billing');
    clock.advance(3_000);
    await one.tryAcquire('billing');
    if (!first.granted || !second.granted) throw new Error('both should be granted');
    await one.release(first.permit, clock.now() + 2_000);
    await admin.pause('billing');
    await two.tryAcquire('billing');
    await admin.resume('billing');
    clock.advance(20_000);
    await two.tryAcquire('billing');
    await two.release((await two.tryAcquire('billing') as { permit: typeof first.permit }).permit);
    await admin.forceRelease('billing', 0).catch(() => undefined);
    await admin.remove('billing');
    expect(written.length).toBeGreaterThanOrEqual(8);
    for (const [name, entry] of written) expect(decodeEntry(name, encodeEntry(entry))).toStrictEqual(entry);
  });
});
