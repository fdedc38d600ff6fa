import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastHistoryStore } from '../../lib/schedules/hazelcast-history.store';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describeHistoryStoreContract } from './history-store.contract';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  describeHistoryStoreContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('history');
    return {
      // Two connections, as two nodes would have.
      stores: [
        new HazelcastHistoryStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
        new HazelcastHistoryStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
      ],
      async close() {
        for (const map of ['job-runs', 'job-ticks']) await (await raw().getMap(`${mapPrefix}.${map}`)).destroy();
      },
    };
  });
});
