import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { TaskRecord } from '../../lib/store/tasks/task';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { encodeTask } from '../../lib/store/tasks/task.codec';
import { decideClaim } from '../../lib/tasks/task-claim.rules';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { pendingAt } from '../../lib/testing/task-store-ranks.contract';

/**
 * The Hazelcast store reads claimable tasks by windows of ranks that it sizes from what it learned; the memory store
 * reads them all. Over random backlogs (bursts, gaps, late tasks below the window, several priorities and types, small
 * limits) and random claims and hand-backs, both must answer the same, step after step.
 */
describe('claim windows on a real member answer as the memory store does', () => {
  const raw = useRawClient();
  const ACTOR = { instance: 'i/1', acquirer: 'i' };

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('random backlog %i', async (trial) => {
    let seed = 17 + trial * 101;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const mapPrefix = uniquePrefix('windows');
    const hazelcast = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
    const memory = new TaskRecordStore(new MemoryBackend());
    await Promise.all([hazelcast.connect(), memory.connect()]);
    try {
      const now = Date.now();
      const written = new Map<string, TaskRecord>();
      const write = async (next: TaskRecord) => {
        const before = written.get(next.id);
        const expected = { raw: before ? encodeTask(before) : null };
        expect(await Promise.all([hazelcast, memory].map((s: TaskStore) => s.compareAndSet(next.id, expected, next)))).toEqual([true, true]);
        written.set(next.id, next);
      };
      let seq = now * 1000 - 1e9;
      for (let step = 0; step < 60; step++) {
        if (random() < 0.4) {
          for (let i = 0, n = 1 + Math.floor(random() * 30); i < n; i++) {
            seq += random() < 0.1 ? Math.floor(random() * 1e8) : 1 + Math.floor(random() * 100); // bursts and gaps
            const priority = random() < 0.8 ? 0 : Math.floor(random() * 3) - 1;
            await write(pendingAt(random() < 0.8 ? 'x' : 'y', `n${written.size}`, priority, random() < 0.1 ? seq - 5e8 : seq));
          }
        }
        const limit = 1 + Math.floor(random() * 10);
        const types = random() < 0.7 ? ['x'] : ['x', 'y'];
        const [windows, all] = await Promise.all([hazelcast, memory].map((s) => s.claimable(types, now, now - 1_000, limit)));
        expect(`${step}: ${windows.map((t) => t.id).join(',')}`).toBe(`${step}: ${all.map((t) => t.id).join(',')}`);
        for (const task of windows) {
          const roll = random();
          if (roll >= 0.7) continue;
          const decision = decideClaim(task, ACTOR, now, 60_000);
          if (decision.outcome !== 'claimed') throw new Error(`${task.id}: ${decision.outcome}`);
          await write(decision.task);
          if (roll < 0.6) continue;
          const { claim: _claim, ...rest } = decision.task;
          await write({ ...rest, state: 'pending', notBefore: now }); // handed back: its seq, below the window
        }
      }
    } finally {
      await Promise.all([hazelcast.close(), memory.close()]);
      await (await raw().getMap(`${mapPrefix}.tasks`)).destroy();
    }
  });
});
