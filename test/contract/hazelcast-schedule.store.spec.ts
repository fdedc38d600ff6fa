import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { libraryMapNames } from '../../lib/backends/hazelcast/library-maps';
import { ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  // The schedule store's contract runs on Hazelcast with every other store's: test/contract/hazelcast-backend.spec.ts.
  it('opens only maps the library lists (libraryMapNames), so the near-cache guard covers them', async () => {
    const mapPrefix = uniquePrefix('schedule-maps');
    const store = new ScheduleRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }));
    await store.connect();
    try {
      await store.list();
      const opened = (await raw().getDistributedObjects()).map((o) => o.getName()).filter((n) => n.startsWith(`${mapPrefix}.`));
      expect(opened).toEqual([`${mapPrefix}.schedules`]);
      expect(libraryMapNames(mapPrefix)).toEqual(expect.arrayContaining(opened));
    } finally {
      await store.close();
      await (await raw().getMap(`${mapPrefix}.schedules`)).destroy();
    }
  });
});
