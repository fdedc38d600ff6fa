import { Client } from 'hazelcast-client';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { systemClock } from '../../lib/core/clock';
import { recordNewClients } from '../support/client-spy';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

/** One client per process, shared by every capability's store: opened by the first, shut down after the last. */
describe('HazelcastConnection on a real member', () => {
  it('gives two stores one client, keeps it while either is open, and shuts it down after the last closes', async () => {
    const { created, restore } = recordNewClients();
    try {
      const connection = new HazelcastConnection({ clientConfig: testClientConfig(), connectTimeoutMs: 10_000 });
      const a = new HazelcastPermitStore({ connection, mapPrefix: uniquePrefix('shared-a') });
      const b = new HazelcastPermitStore({ connection, mapPrefix: uniquePrefix('shared-b') });
      await Promise.all([a.connect({ clock: systemClock }), b.connect({ clock: systemClock })]);
      // One client, the one both stores use: the first connection is bounded without a throwaway probe client.
      expect(created).toHaveLength(1);
      const [shared] = created;
      expect(connection.client).toBe(shared);
      await a.close();
      expect(shared.getLifecycleService().isRunning()).toBe(true);
      expect(await b.list({ timeoutMs: 5_000 })).toEqual([]);
      await b.close();
      expect(shared.getLifecycleService().isRunning()).toBe(false);
    } finally {
      restore();
    }
  });

  it('never shuts down a client the application injected', async () => {
    const client = await Client.newHazelcastClient(testClientConfig());
    try {
      const connection = new HazelcastConnection({ client });
      const store = new HazelcastPermitStore({ connection, mapPrefix: uniquePrefix('injected') });
      await store.connect({ clock: systemClock });
      await store.close();
      expect(client.getLifecycleService().isRunning()).toBe(true);
    } finally {
      await client.shutdown();
    }
  });
});
