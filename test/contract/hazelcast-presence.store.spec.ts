import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { PresenceRecordStore } from '../../lib/presence/presence-record.store';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describePresenceStoreContract } from '../../lib/testing';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  describePresenceStoreContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('presence');
    return {
      // Two connections, as two nodes would have.
      stores: [
        new PresenceRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix })),
        new PresenceRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix })),
      ],
      async plant(instance, value) {
        await (await raw().getMap<string, string>(`${mapPrefix}.presence`)).set(instance, value);
      },
      async close() {
        await (await raw().getMap(`${mapPrefix}.presence`)).destroy();
      },
    };
  }, { timeoutMs: 120_000 });
});
