import { HazelcastJsonValue } from 'hazelcast-client';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { TASK_GROUP_MAP, TASK_MAP, TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describeRankedClaimsContract, describeTaskStoreContract } from '../../lib/testing';

/**
 * The default task store (over the store contract) on a real Hazelcast member: the same contract as the native
 * Hazelcast store. The native store's own cases (claim windows that read about one batch of a backlog, what the
 * member's filtered listener sends a node) are about its member-side paths and stay in hazelcast-task.store.spec.ts.
 */
describe('the task store over the contract, against a real Hazelcast member', () => {
  const raw = useRawClient();
  // Two backends, a connection each, as two nodes would have.
  const store = (mapPrefix: string) => new TaskRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }));
  const destroy = async (mapPrefix: string) => {
    await (await raw().getMap(`${mapPrefix}.${TASK_MAP}`)).destroy();
    await (await raw().getMap(`${mapPrefix}.${TASK_GROUP_MAP}`)).destroy();
  };

  describeTaskStoreContract('TaskRecordStore on hazelcast', async () => {
    const mapPrefix = uniquePrefix('task-records');
    return { stores: [store(mapPrefix), store(mapPrefix)], close: () => destroy(mapPrefix) };
  }, { timeoutMs: 120_000 });

  describeRankedClaimsContract('TaskRecordStore on hazelcast', async () => {
    const mapPrefix = uniquePrefix('task-records-ranks');
    return {
      stores: [store(mapPrefix), store(mapPrefix)],
      async plant(id, json) {
        // The tasks map has indexes, so the backend keeps JSON values the members can query.
        await (await raw().getMap(`${mapPrefix}.${TASK_MAP}`)).set(id, new HazelcastJsonValue(json));
      },
      close: () => destroy(mapPrefix),
    };
  }, { timeoutMs: 120_000 });
});
