import { randomUUID } from 'node:crypto';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { Clock } from '../../lib/core/clock';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import type { StoreBackend } from '../../lib/store/store-backend';
import { StoreClock } from '../../lib/store/store-clock';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';

/**
 * Where a store has a clock, a takeover is the store's decision: a node whose count of that clock runs far ahead (here
 * 20 s, as after a reading taken on a clock that later stepped back) takes a live permit as lapsed, and the store,
 * on its own clock, refuses the write. Once the permit lapsed on the store's clock, the same node is granted.
 */
describe.each([
  { kind: 'PostgreSQL', backend: (mapPrefix: string): StoreBackend => new PostgresBackend({ connectionString: testPostgresUrl(), mapPrefix }) },
  {
    kind: 'Redis',
    backend: (mapPrefix: string): StoreBackend => new RedisBackend({ url: testRedisUrl(), mapPrefix, onLostData: () => undefined, onWarning: () => undefined }),
  },
])('$kind: the store confirms a takeover on its own clock', ({ kind, backend }) => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
  });

  async function node(mapPrefix: string, clock: Clock): Promise<PermitRecordStore> {
    const store = new PermitRecordStore(backend(mapPrefix));
    await store.connect({ clock });
    closing.push(() => store.close());
    return store;
  }

  it('refuses a grant decided on a count 20 s ahead while the permit is live, and takes it once it lapsed', async () => {
    const mapPrefix = `takeover-${randomUUID().slice(0, 8)}`;
    if (kind === 'Redis') await (backend(mapPrefix) as RedisBackend).declareFresh();
    const timed = backend(mapPrefix);
    await timed.open();
    closing.push(() => timed.close());
    const storeClock = new StoreClock({ now: () => Date.now() });
    storeClock.attach(() => timed.now!());
    await storeClock.start();
    closing.push(async () => storeClock.stop());
    const ahead: Clock = { now: () => storeClock.now() + 20_000 };

    const holderStore = await node(mapPrefix, storeClock);
    await new SemaphoreAdmin(holderStore, storeClock).put({ name: 'job', duration: '2s' });
    const holder = new PermitEngine(holderStore, { acquirer: 'holder', group: 'g', instance: 'holder/1' }, storeClock, { clockSkewMs: 100, maxAttempts: 4 });
    const held = await holder.tryAcquire('job');
    expect(held).toMatchObject({ granted: true });

    const takerStore = await node(mapPrefix, ahead);
    const taker = new PermitEngine(takerStore, { acquirer: 'taker', group: 'g', instance: 'taker/1' }, ahead, { clockSkewMs: 100, maxAttempts: 4 });
    const early = await taker.tryAcquire('job');
    expect(early).toMatchObject({ granted: false });
    const stillHeld = await holder.tryAcquire('job');
    expect(stillHeld).toMatchObject({ granted: true, outcome: 'refreshed' });
    if (!held.granted || !stillHeld.granted) throw new Error('not held');

    // The holder stops refreshing; once its permit lapsed on the store's clock, the taker's write stands.
    const lapsedAt = stillHeld.permit.expiresAt + 100;
    for (;;) {
      const now = await timed.now!();
      if (now >= lapsedAt) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, lapsedAt - now)));
    }
    const late = await taker.tryAcquire('job');
    expect(late).toMatchObject({ granted: true, outcome: 'granted' });
    process.stdout.write(`${kind}: a grant on a count 20 s ahead refused while the permit was live (${early.granted ? '' : early.reason}), granted after it lapsed on the store's clock\n`);
  });
});
