import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { TaskWatcher } from '../../lib/store/tasks/task-store';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

/** A store whose watch takes effect only once `open()` is called, as a member-side listener does once registered. */
class SlowWatchStore extends TaskRecordStore {
  private readonly pending: Array<() => void> = [];
  private gate!: () => void;
  private readonly registered = new Promise<void>((resolve) => (this.gate = resolve));

  override watch(listener: TaskWatcher, types?: readonly string[]): () => void {
    let stop: (() => void) | undefined;
    this.pending.push(() => (stop = super.watch(listener, types)));
    return () => stop?.();
  }

  override listening(): Promise<void> {
    return this.registered;
  }

  open(): void {
    for (const register of this.pending.splice(0)) register();
    this.gate();
  }
}

describe('a claim query asked while the watch is being set up', () => {
  it('finds a task submitted meanwhile (no event came for it): it is due by the clock once the watch is in place', async () => {
    const clock = new FakeClock();
    const backend = new MemoryBackend();
    const store = new SlowWatchStore(backend);
    await store.connect();
    const ran: string[] = [];
    // No scan comes round during the test: only the first query can find the task.
    const worker = new TaskWorker(store, { instance: 'a/1', acquirer: 'a' }, { clock, clockSkewMs: 0, scanMs: 3_600_000 });
    worker.handle('w', async (_data, context) => {
      ran.push(context.task.id);
    });
    worker.start(); // its first query waits for the watch
    try {
      clock.advance(5);
      const task = decideSubmit(undefined, { type: 'w', name: 'meanwhile' }, clock.now(), 60_000).task;
      const submitter = new TaskRecordStore(backend.node());
      await submitter.connect();
      expect(await submitter.compareAndSet(task.id, { raw: null }, task)).toBe(true);
      await submitter.close();
      store.open();
      await eventually('the task submitted while the watch was set up ran', () => ran.includes('w:meanwhile'));
    } finally {
      await worker.stop(100);
      await store.close();
    }
  });
});
