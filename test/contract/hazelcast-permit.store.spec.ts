import type { IMap } from 'hazelcast-client';
import { systemClock } from '../../lib/core/clock';
import { HazelcastPermitStore } from '../../lib/permits/hazelcast-permit.store';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describePermitStoreContract } from './permit-store.contract';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  describePermitStoreContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('contract');
    return {
      // Two clients, as two nodes would have.
      stores: [
        new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix }),
        new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix }),
      ],
      async writeRaw(key, value) {
        await (await raw().getMap<string, string>(`${mapPrefix}.semaphores`)).set(key, value);
      },
      async close() {
        await (await raw().getMap(`${mapPrefix}.semaphores`)).destroy();
      },
    };
  });

  it("is not sent its own writes back (it takes them from their answers), and still hears the others' writes and every removal", async () => {
    const mapPrefix = uniquePrefix('own-writes');
    const [a, b] = [0, 1].map(() => new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix }));
    await Promise.all([a, b].map((store) => store.connect({ clock: systemClock })));
    try {
      // What each store's listeners were sent, and what each store wrote.
      const sent = new Map<HazelcastPermitStore, string[]>([[a, []], [b, []]]);
      const wrote = new Map<HazelcastPermitStore, string[]>([[a, []], [b, []]]);
      for (const store of [a, b]) {
        const spied = store as unknown as { observe(name: string, raw: string): void };
        const observe = spied.observe.bind(store);
        spied.observe = (name, raw) => (sent.get(store)!.push(raw), observe(name, raw));
        const map = (store as unknown as { map: IMap<string, string> }).map;
        const [putIfAbsent, replaceIfSame] = [map.putIfAbsent.bind(map), map.replaceIfSame.bind(map)];
        map.putIfAbsent = ((key: string, value: string) => (wrote.get(store)!.push(value), putIfAbsent(key, value))) as typeof map.putIfAbsent;
        map.replaceIfSame = ((key: string, expected: string, next: string) => (wrote.get(store)!.push(next), replaceIfSame(key, expected, next))) as typeof map.replaceIfSame;
      }
      await new SemaphoreAdmin(a, systemClock).put({ name: 'billing', duration: '10s', permits: 2 });
      const one = new PermitEngine(a, { acquirer: 'a', group: 'production', instance: 'a/1' }, systemClock);
      const granted = await one.tryAcquire('billing');
      expect(await one.tryAcquire('billing')).toMatchObject({ granted: true, outcome: 'refreshed' });
      expect(granted.granted).toBe(true);
      // Each view holds the entry as written, the writer's from its answers.
      expect(a.peek('billing')?.raw).toBe(wrote.get(a)!.at(-1));
      await eventually("b's view has a's last write", () => b.peek('billing')?.raw === wrote.get(a)!.at(-1));
      const two = new PermitEngine(b, { acquirer: 'b', group: 'production', instance: 'b/1' }, systemClock);
      expect(await two.tryAcquire('billing')).toMatchObject({ granted: true, outcome: 'granted' });
      // The events of one entry come in order: once a has heard b's write, any of its own would have come before.
      await eventually("a's view has b's write", () => a.peek('billing')?.raw === wrote.get(b)!.at(-1));
      expect(wrote.get(a)).toHaveLength(3);
      expect(sent.get(a)).toEqual(wrote.get(b));
      expect(sent.get(b)).toEqual(wrote.get(a));
      // Removals come to every node, whoever wrote the entry last (a here, b for billing).
      await new SemaphoreAdmin(a, systemClock).put({ name: 'reports', duration: '10s' });
      await eventually("b's view has reports", () => b.peek('reports')?.raw === wrote.get(a)!.at(-1));
      const map = await raw().getMap<string, string>(`${mapPrefix}.semaphores`);
      await Promise.all(['billing', 'reports'].map((name) => map.remove(name)));
      for (const [store, name] of [[a, 'billing'], [a, 'reports'], [b, 'billing'], [b, 'reports']] as const) {
        await eventually(`${store === a ? 'a' : 'b'} heard ${name} removed`, () => store.peek(name)?.raw === null);
      }
    } finally {
      await Promise.all([a, b].map((store) => store.close()));
    }
  });

  it('leaves an injected client running when it closes', async () => {
    const store = new HazelcastPermitStore({ client: raw(), mapPrefix: uniquePrefix('injected') });
    await store.connect({ clock: systemClock });
    await store.close();
    expect(raw().getLifecycleService().isRunning()).toBe(true);
  });
});
