import { HazelcastConnection } from '../../lib/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/tasks/hazelcast-task.store';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describeTaskStoreContract } from './task-store.contract';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  describeTaskStoreContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('tasks');
    return {
      // Two connections, as two nodes would have.
      stores: [
        new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
        new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
      ],
      async close() {
        await (await raw().getMap(`${mapPrefix}.tasks`)).destroy();
        await (await raw().getMap(`${mapPrefix}.task-groups`)).destroy();
      },
    };
  });
});
