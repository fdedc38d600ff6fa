import { HazelcastJsonValue } from 'hazelcast-client';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { encodeTask } from '../../lib/store/tasks/task.codec';
import { decideClaim } from '../../lib/tasks/task-claim.rules';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { describeRankedClaimsContract, describeTaskBacklogContract, describeTaskStoreContract } from '../../lib/testing';

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
  }, { timeoutMs: 120_000 });

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
  }, { timeoutMs: 120_000 });

  describeTaskBacklogContract('hazelcast', async () => {
    const mapPrefix = uniquePrefix('tasks-backlog');
    const store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
    // Values every member-side query of a claim returned, as the store counts them (set to [] it counts).
    const reads = (store as unknown as { claims: { claimReads?: number[] } }).claims.claimReads = [];
    const claimable = store.claimable.bind(store);
    store.claimable = (...args) => {
      reads.length = 0;
      return claimable(...args);
    };
    return {
      store,
      async seed(tasks) {
        const map = await raw().getMap<string, HazelcastJsonValue>(`${mapPrefix}.tasks`);
        for (let i = 0; i < tasks.length; i += 1_000) await map.setAll(tasks.slice(i, i + 1_000).map((t) => [t.id, new HazelcastJsonValue(encodeTask(t))]));
      },
      // A few windows of about the batch over the whole search (start-up included), and the tasks that backed off and
      // are due (their range of waiting ranks, read until they are claimed).
      reads: { last: () => reads.reduce((sum, n) => sum + n, 0), bound: ({ batch, due }) => 3 * batch + due },
      async close() {
        await (await raw().getMap(`${mapPrefix}.tasks`)).destroy();
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

    it('claims only to a watch that asks for them, and never a node’s own claims: the member does not send them', async () => {
      const [submitter, worker, plain] = [store(), store(), store()];
      await Promise.all([submitter.connect(), worker.connect(), plain.connect()]);
      const [byWorker, byPlain] = [received(worker), received(plain)];
      worker.watch(() => undefined, ['claimed'], { listener: () => undefined, except: 'worker/1' });
      plain.watch(() => undefined, ['claimed']);
      await Promise.all([worker.listening(), plain.listening()]);
      const now = Date.now();
      for (const [name, instance] of [['mine', 'worker/1'], ['theirs', 'other/1']]) {
        const task = decideSubmit(undefined, { type: 'claimed', name }, now, 60_000).task;
        await submitter.compareAndSet(task.id, { raw: null }, task);
        const read = await submitter.read(task.id);
        const claim = decideClaim(read.task!, { instance, acquirer: instance }, now, 60_000);
        if (claim.outcome !== 'claimed') throw new Error('not claimable');
        await submitter.compareAndSet(task.id, read, claim.task);
      }
      // Events of one key arrive in order, and the last write was the claim of 'theirs'; two keys' events may cross.
      await eventually('the claim of theirs', () => byWorker.filter((k) => k === 'claimed:theirs').length === 2);
      await eventually('the plain watch heard both submits', () => byPlain.length === 2);
      expect([...byWorker].sort()).toEqual(['claimed:mine', 'claimed:theirs', 'claimed:theirs']);
      expect(byPlain.sort()).toEqual(['claimed:mine', 'claimed:theirs']);
    });
  });
});

/** The keys of the events that reach `store` from the member, before any filtering of its own. */
function received(store: HazelcastTaskStore): string[] {
  const keys: string[] = [];
  const target = (store as unknown as { pending: { heard(key: string, value: unknown): void } }).pending;
  const heard = target.heard.bind(target);
  target.heard = (key, value) => {
    keys.push(key);
    heard(key, value);
  };
  return keys;
}
