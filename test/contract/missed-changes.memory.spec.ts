import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { RunRequestRecordStore, type RunRequest } from '../../lib/schedules/run-request.store';
import { eventually } from '../support/eventually';

/**
 * Every view re-reads what it relies on when the feed says changes may have been missed (a reconnect, a member gone):
 * the permits' and schedules' views list again, and the two feeds without a view of their own do the same. The memory
 * backend's `missChanges` is a feed that dropped events and lost nothing.
 */
describe('when the feed says changes may have been missed (memory)', () => {
  it('tells a task watcher of work it could not read, so the worker asks the store at its next claim', async () => {
    const backend = new MemoryBackend();
    const store = new TaskRecordStore(backend.node());
    await store.connect();
    try {
      const told: string[] = [];
      store.watch((_type, _id, task) => told.push(task ? task.id : 'work it could not read'), ['x']);
      await store.listening();
      backend.records.missChanges('reconnected');
      expect(told).toEqual(['work it could not read']);
    } finally {
      await store.close();
    }
  });

  it('reads every run request again and hears the one whose event it never got', async () => {
    const backend = new MemoryBackend();
    const requester = new RunRequestRecordStore(backend);
    const node = new RunRequestRecordStore(backend);
    const heard: string[] = [];
    await requester.connect(() => undefined);
    try {
      const request: RunRequest = { id: 'r-1', job: 'ledger', requestedAt: 0, requestedBy: 'a', state: 'pending', nudge: 0, expiresAt: Date.now() + 60_000 };
      expect(await requester.create(request)).toBe(true);
      // Connected after the request's event went out: as if the event was lost on the way to it.
      await node.connect((r) => heard.push(r.id));
      expect(heard).toEqual([]);
      backend.records.missChanges('member-left');
      await eventually('the request heard from the re-read', () => heard.includes('r-1'));
    } finally {
      await node.close();
      await requester.close();
    }
  });
});
