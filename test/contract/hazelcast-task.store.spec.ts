import { HazelcastJsonValue } from 'hazelcast-client';
import { HazelcastConnection } from '../../lib/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/tasks/hazelcast-task.store';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describeTaskStoreContract } from './task-store.contract';
import { describeRankedClaimsContract } from './task-store-ranks.contract';

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

  describeRankedClaimsContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('tasks-ranks');
    const store = () => new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
    return {
      stores: [store(), store()],
      async plant(id, json) {
        await (await raw().getMap(`${mapPrefix}.tasks`)).set(id, new HazelcastJsonValue(json));
      },
      async close() {
        await (await raw().getMap(`${mapPrefix}.tasks`)).destroy();
        await (await raw().getMap(`${mapPrefix}.task-groups`)).destroy();
      },
    };
  });

  describe('what the member sends a node', () => {
    const mapPrefix = uniquePrefix('tasks-fanout');
    const stores: HazelcastTaskStore[] = [];
    const store = () => {
      const made = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
      stores.push(made);
      return made;
    };
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close()));
      await (await raw().getMap(`${mapPrefix}.tasks`)).destroy();
    });

    it('only pending tasks of the types a node watches, and nothing to a process that watches none', async () => {
      const [submitter, worker, witness] = [store(), store(), store()];
      await Promise.all([submitter.connect(), worker.connect(), witness.connect()]);
      // What reaches each client from the member, before any filtering of its own.
      const received = (s: HazelcastTaskStore) => {
        const keys: string[] = [];
        const target = (s as unknown as { pending: { heard(key: string, value: unknown): void } }).pending;
        const heard = target.heard.bind(target);
        target.heard = (key, value) => {
          keys.push(key);
          heard(key, value);
        };
        return keys;
      };
      const [bySubmitter, byWorker, byWitness] = [received(submitter), received(worker), received(witness)];
      worker.watch(() => undefined, ['wanted']);
      witness.watch(() => undefined);
      await Promise.all([worker.listening(), witness.listening()]);
      const now = Date.now();
      const ids = ['other:1', 'other:2', 'other:3', 'wanted:1'];
      for (const id of ids) {
        const [type, name] = id.split(':');
        await submitter.compareAndSet(id, { raw: null }, decideSubmit(undefined, { type, name }, now, 60_000).task);
      }
      // Once the witness (every type) heard all four and the worker its one, the member sent what it was going to.
      await eventually('every event', () => ids.every((id) => byWitness.includes(id)) && byWorker.includes('wanted:1'));
      expect(byWorker).toEqual(['wanted:1']);
      expect(bySubmitter).toEqual([]);
    });
  });
});
