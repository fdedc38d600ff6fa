import type { IMap } from 'hazelcast-client';
import { systemClock } from '../../lib/core/clock';
import { HazelcastPermitStore } from '../../lib/permits/hazelcast-permit.store';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import * as codec from '../../lib/permits/semaphore-entry.codec';
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

  it("takes the event of a node's own write from the write, without decoding the value again", async () => {
    const store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix: uniquePrefix('own-event') });
    await store.connect({ clock: systemClock });
    const decodes = jest.spyOn(codec, 'decodeEntry');
    try {
      await new SemaphoreAdmin(store, systemClock).put({ name: 'billing', duration: '10s' });
      // The member sends a write's event before its answer, and the answer usually comes first to the view: here
      // every answer is held back until the view has heard the write's event, so each event meets a write in flight.
      const heard = new Set<number>();
      store.watch((_, entry) => entry && heard.add(entry.revision));
      const written: string[] = [];
      const map = (store as unknown as { map: IMap<string, string> }).map;
      const replaceIfSame = map.replaceIfSame.bind(map);
      map.replaceIfSame = (async (key: string, expected: string, next: string) => {
        written.push(next);
        const won = await replaceIfSame(key, expected, next);
        const { revision } = JSON.parse(next) as { revision: number };
        await eventually(`the event of revision ${revision}`, () => heard.has(revision));
        return won;
      }) as typeof map.replaceIfSame;
      const engine = new PermitEngine(store, { acquirer: 'a', group: 'production', instance: 'a/1' }, systemClock);
      const granted = await engine.tryAcquire('billing');
      expect(granted).toMatchObject({ granted: true, outcome: 'granted' });
      expect(await engine.tryAcquire('billing')).toMatchObject({ granted: true, outcome: 'refreshed' });
      if (!granted.granted) return;
      expect(await engine.release(granted.permit)).toBe('released');
      expect(written).toHaveLength(3);
      expect(decodes.mock.calls.filter(([, raw]) => written.includes(raw as string))).toEqual([]);
      expect(store.peek('billing')?.raw).toBe(written[2]);
    } finally {
      decodes.mockRestore();
      await store.close();
    }
  });

  it('leaves an injected client running when it closes', async () => {
    const store = new HazelcastPermitStore({ client: raw(), mapPrefix: uniquePrefix('injected') });
    await store.connect({ clock: systemClock });
    await store.close();
    expect(raw().getLifecycleService().isRunning()).toBe(true);
  });
});
