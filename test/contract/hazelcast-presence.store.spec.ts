import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastPresenceStore } from '../../lib/presence/hazelcast-presence.store';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describePresenceStoreContract } from './presence-store.contract';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  describePresenceStoreContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('presence');
    return {
      // Two connections, as two nodes would have.
      stores: [
        new HazelcastPresenceStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
        new HazelcastPresenceStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
      ],
      async writeRaw(instance, value) {
        await (await raw().getMap<string, string>(`${mapPrefix}.presence`)).set(instance, value);
      },
      async close() {
        await (await raw().getMap(`${mapPrefix}.presence`)).destroy();
      },
    };
  });
});
