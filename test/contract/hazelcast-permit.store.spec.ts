import { systemClock } from '../../lib/core/clock';
import { HazelcastPermitStore } from '../../lib/permits/hazelcast-permit.store';
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

  it('leaves an injected client running when it closes', async () => {
    const store = new HazelcastPermitStore({ client: raw(), mapPrefix: uniquePrefix('injected') });
    await store.connect({ clock: systemClock });
    await store.close();
    expect(raw().getLifecycleService().isRunning()).toBe(true);
  });
});
