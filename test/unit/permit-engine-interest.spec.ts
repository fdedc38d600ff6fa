import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { FakeClock } from '../support/fake-clock';

/**
 * An engine asks its store to tell it only of the semaphores it holds, lets go of or watches (the store may leave
 * the other values undecoded), and must keep hearing of a released permit until the view shows it gone: that news
 * is what lets it forget the release, and what stops it answering "held" from a view that still shows the permit.
 */
describe('what news a PermitEngine asks its store for', () => {
  it('a semaphore it holds, then lets go of until the view shows the release landed; never one it has nothing of', async () => {
    const clock = new FakeClock();
    const store = new PermitRecordStore(new MemoryBackend());
    await store.connect({ clock });
    let wants: ((name: string) => boolean) | undefined;
    const watch = store.watch.bind(store);
    store.watch = (listener, filter) => {
      wants = filter;
      return watch(listener, filter);
    };
    const admin = new SemaphoreAdmin(store, clock);
    await admin.put({ name: 'billing', duration: '10s' });
    await admin.put({ name: 'payroll', duration: '10s' });
    const engine = new PermitEngine(store, { acquirer: 'a', group: 'production', instance: 'a/1' }, clock);
    expect(wants?.('billing')).toBe(false);
    const granted = await engine.tryAcquire('billing');
    if (!granted.granted) throw new Error('billing should be granted');
    expect([wants?.('billing'), wants?.('payroll')]).toEqual([true, false]);
    const releasing = engine.release(granted.permit);
    expect(wants?.('billing')).toBe(true); // let go, not landed yet
    expect(await releasing).toBe('released');
    expect(wants?.('billing')).toBe(false);
    const unwatch = engine.watch(granted.permit, () => undefined);
    expect(wants?.('billing')).toBe(true);
    unwatch();
    expect(wants?.('billing')).toBe(false);
  });
});
