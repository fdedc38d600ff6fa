import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describeHistoryStoreContract } from '../../lib/testing';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  describeHistoryStoreContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('history');
    return {
      // Two connections, as two nodes would have.
      stores: [
        new HistoryRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix })),
        new HistoryRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix })),
      ],
      async close() {
        for (const map of ['job-runs', 'job-ticks']) await (await raw().getMap(`${mapPrefix}.${map}`)).destroy();
      },
    };
  }, { timeoutMs: 120_000 });
});
