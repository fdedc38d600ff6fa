import assert from 'node:assert/strict';
import type { TaskRecord } from '../store/tasks/task';
import { decideClaim } from '../tasks/task-claim.rules';
import type { ReservingTaskStore } from '../tasks/task-pulls';
import type { TaskStore } from '../store/tasks/task-store';
import { eventually } from './eventually';

/**
 * On a store that reserves (`TaskStore.reserve`): a watch hears no pending work and no claim. Its worker waits for
 * work, `task` (pending, of a type nothing else uses) is submitted and claimed, and once the wake has come (published
 * after any news of the task, on the same connection) the watch has heard nothing.
 */
export async function assertWatchHearsNothing(a: TaskStore, b: ReservingTaskStore, task: TaskRecord, now: number, eventTimeoutMs: number): Promise<void> {
  const heard: string[] = [];
  const stop = b.watch((type, id) => heard.push(id), undefined, { listener: (_type, id) => heard.push(`claim ${id}`) });
  let woken = 0;
  const stopWaiting = await b.awaitWork('b/1', () => woken++);
  try {
    await b.listening();
    assert.deepEqual((await b.reserve([task.type], 'b/1', { count: 1, now, lapsedBefore: now, holdMs: 60_000, waitMs: 60_000 })).tasks, []);
    await a.compareAndSet(task.id, { raw: null }, task);
    await eventually('the wake', () => woken > 0, eventTimeoutMs);
    const read = await a.read(task.id);
    const claim = decideClaim(read.task!, { instance: 'a/1', acquirer: 'a' }, now, 5_000);
    assert.equal(await a.compareAndSet(task.id, read, claim.outcome === 'claimed' ? claim.task : null), true);
    assert.deepEqual((await b.reserve([task.type], 'b/1', { count: 1, now, lapsedBefore: now, holdMs: 60_000, waitMs: 60_000 })).tasks, []);
    assert.deepEqual(heard, []);
  } finally {
    stop();
    await stopWaiting();
  }
}
