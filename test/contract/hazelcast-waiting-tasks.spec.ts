import { Aggregators, HazelcastJsonValue, Predicates, type IMap, type Predicate } from 'hazelcast-client';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import type { TaskRecord } from '../../lib/store/tasks/task';
import { encodeTask } from '../../lib/store/tasks/task.codec';
import { decideClaim } from '../../lib/tasks/task-claim.rules';
import { compareReady } from '../../lib/store/tasks/task-store.rules';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { pendingAt } from '../../lib/testing/task-store-ranks.contract';

/**
 * The part of a query the sorted index on state and rank answers: the tasks whose JSON the members read to check the
 * rest. An OR with a branch the index cannot answer, or an AND with no indexed part, reads every task.
 */
function indexedPart(predicate: Predicate): Predicate {
  const node = predicate as unknown as { predicates?: Predicate[]; field?: string };
  if (node.predicates) {
    const kind = predicate.constructor.name;
    const parts = node.predicates.map((p) => ({ p, indexed: isIndexed(p) }));
    if (kind === 'OrPredicate') return parts.every((p) => p.indexed) ? Predicates.or(...node.predicates.map(indexedPart)) : Predicates.alwaysTrue();
    const kept = parts.filter((p) => p.indexed).map(({ p }) => indexedPart(p));
    return kept.length === 0 ? Predicates.alwaysTrue() : kept.length === 1 ? kept[0] : Predicates.and(...kept);
  }
  return isIndexed(predicate) ? predicate : Predicates.alwaysTrue();
}

function isIndexed(predicate: Predicate): boolean {
  const node = predicate as unknown as { predicates?: Predicate[]; field?: string };
  if (node.predicates) return predicate.constructor.name === 'OrPredicate' ? node.predicates.every(isIndexed) : node.predicates.some(isIndexed);
  return node.field === 'state' || node.field === 'rank';
}

/**
 * Tasks that wait (retries backing off) are stored by when they come due, apart from claim order: a claim query's
 * windows never hold them, so many of them waiting cost the queries nothing, and once due they come first in claim order.
 */
describe('tasks that wait, on a real member', () => {
  const raw = useRawClient();

  it('are never read by a claim query while they wait, and are claimed in claim order once due', async () => {
    const mapPrefix = uniquePrefix('tasks-waiting');
    const store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
    await store.connect();
    try {
      const now = Date.now();
      const base = now * 1000 - 7.2e9;
      const later = now + 3_600_000;
      // 3,000 retries backing off for an hour, below every task that is due (they keep their seqs); one of them of a
      // higher priority. Then 1,000 tasks due.
      const waiting = Array.from({ length: 3_000 }, (_, i): TaskRecord => ({ ...pendingAt('bw', `w${i}`, i === 2_000 ? 5 : 0, base + i * 50), notBefore: later }));
      const due = Array.from({ length: 1_000 }, (_, i) => pendingAt('bw', `r${i}`, 0, base + 1e9 + i * 50));
      const map = await raw().getMap<string, HazelcastJsonValue>(`${mapPrefix}.tasks`);
      const all = [...waiting, ...due];
      for (let i = 0; i < all.length; i += 1_000) await map.setAll(all.slice(i, i + 1_000).map((t) => [t.id, new HazelcastJsonValue(encodeTask(t))]));

      // What each query of the store makes the members read: counted on the member from the indexed part of each.
      const tasks = (store as unknown as { tasks: IMap<string, HazelcastJsonValue> }).tasks;
      const asked: Predicate[] = [];
      const values = tasks.valuesWithPredicate.bind(tasks);
      const aggregate = tasks.aggregateWithPredicate.bind(tasks);
      tasks.valuesWithPredicate = ((predicate: Predicate) => (asked.push(predicate), values(predicate))) as typeof tasks.valuesWithPredicate;
      tasks.aggregateWithPredicate = ((aggregator: Parameters<typeof aggregate>[0], predicate: Predicate) => {
        if (aggregator.constructor.name !== 'CountAggregator') asked.push(predicate); // a count reads the index alone
        return aggregate(aggregator, predicate);
      }) as typeof tasks.aggregateWithPredicate;
      const readByMembers = async () => {
        let read = 0;
        for (const predicate of asked.splice(0)) read += Number(await aggregate(Aggregators.count(), indexedPart(predicate)));
        return read;
      };

      const limit = 256;
      const actor = { instance: 'n/1', acquirer: 'n' };
      const left = [...due].sort(compareReady);
      for (let round = 0; round < 3; round++) {
        const found = await store.claimable(['bw'], now, now - 1_000, limit);
        expect(found.map((t) => t.id)).toEqual(left.slice(0, limit).map((t) => t.id));
        const read = await readByMembers();
        // The first search of a backlog asks for its lowest rank once (it reads what stands above); after that, the
        // members read about a batch a query, however many tasks wait below.
        if (round > 0) expect(read).toBeLessThanOrEqual(3 * limit);
        for (const task of found) {
          const decision = decideClaim(task, actor, now, 60_000);
          expect(decision.outcome === 'claimed' && (await store.compareAndSet(task.id, { raw: encodeTask(task) }, decision.task))).toBe(true);
          // Done at once: running tasks are read for lapsed claims, and a node runs few.
          await map.delete(task.id);
        }
        left.splice(0, found.length);
      }
      // Due: they come first, in claim order (the higher priority first), then what is left of the others.
      const found = await store.claimable(['bw'], later, later - 1_000, limit);
      expect(found.map((t) => t.id)).toEqual([...waiting, ...left].sort(compareReady).slice(0, limit).map((t) => t.id));
    } finally {
      await store.close();
      await (await raw().getMap(`${mapPrefix}.tasks`)).destroy();
    }
  });
});
