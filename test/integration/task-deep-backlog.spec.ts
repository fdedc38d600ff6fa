import { MemoryTaskBackend, MemoryTaskStore } from '../../lib/tasks/memory-task.store';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

describe('a node working through a backlog deeper than one query answers', () => {
  it('asks again as soon as it claimed its way through an answer, not once per refresh window', async () => {
    // The clock never moves, so no refresh window (100 ms) ever passes: a node that waits for one before asking again
    // claims the first answer's 256 tasks and then nothing more (no scan comes round either).
    const clock = new FakeClock();
    const backend = new MemoryTaskBackend();
    const submitter = new MemoryTaskStore(backend);
    const total = 700;
    for (let i = 0; i < total; i++) {
      const task = decideSubmit(undefined, { type: 'w', name: `t${i}` }, clock.now(), 60_000).task;
      expect(await submitter.compareAndSet(task.id, { raw: null }, task)).toBe(true);
    }
    const worker = new TaskWorker(new MemoryTaskStore(backend), { instance: 'a/1', acquirer: 'a' }, { clock, clockSkewMs: 0, scanMs: 3_600_000, concurrency: 8 });
    let ran = 0;
    worker.handle('w', async () => {
      ran++;
    });
    worker.start();
    try {
      await eventually(`all ${total} tasks ran`, () => ran === total);
      const left = await submitter.query({ states: ['pending', 'running'] });
      expect(left).toEqual([]);
    } finally {
      await worker.stop(1_000);
    }
  });
});
