import { TASK_MAP, TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { eventually } from '../support/eventually';

// The task store contract (and its claim order over a backlog) runs on memory through describeStoreContracts, in
// memory-backend.spec.ts: TaskRecordStore is the TaskRecordStore on a memory backend.

/** What the task store over the contract (here on memory) does beyond the contract suite. */
describe('the task store over the contract, on memory', () => {
  const T0 = Date.now();
  const submit = (type: string, name: string) => decideSubmit(undefined, { type, name }, T0, 60_000).task;
  let backend: MemoryBackend;
  let stores: TaskRecordStore[];
  const store = async (corrupt?: string[]) => {
    const made = new TaskRecordStore(backend.node());
    await made.connect({ corruptValue: (key, reason) => corrupt?.push(`${key}: ${reason}`) });
    stores.push(made);
    return made;
  };
  beforeEach(() => {
    backend = new MemoryBackend();
    stores = [];
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('reports an unreadable value and leaves it out of queries and watches, finding the rest', async () => {
    const corrupt: string[] = [];
    const [a, b] = [await store(), await store(corrupt)];
    const heard: string[] = [];
    b.watch((_type, id) => heard.push(id), ['x']);
    await b.listening();
    backend.records.write(TASK_MAP, 'x:bad', '{"v":1,"id":"x:bad","state":"pending"}');
    const good = submit('x', 'good');
    expect(await a.compareAndSet(good.id, { raw: null }, good)).toBe(true);
    await eventually('the good task heard', () => heard.includes('x:good'));
    expect(heard).toEqual(['x:good']);
    expect((await b.claimable(['x'], T0 + 10, T0, 10)).map((t) => t.id)).toEqual(['x:good']);
    expect((await b.query({})).map((t) => t.id)).toEqual(['x:good']);
    expect(corrupt.length).toBeGreaterThanOrEqual(3);
    expect(corrupt.every((line) => line.startsWith('x:bad: '))).toBe(true);
  });

  it('listens to the tasks map only while something watches it, and goes on hearing after changes were missed', async () => {
    const watches = jest.spyOn(backend.records, 'watch');
    const [submitter, worker] = [await store(), await store()];
    const first = submit('w', '1');
    await submitter.compareAndSet(first.id, { raw: null }, first);
    await worker.listening();
    expect(watches).not.toHaveBeenCalled(); // a submitter, or a node with no handlers yet, hears nothing
    const heard: string[] = [];
    const stop = worker.watch((_type, id) => heard.push(id), ['w']);
    await worker.listening();
    expect(watches).toHaveBeenCalledTimes(1);
    backend.records.loseData(); // the feed says changes may have been missed: the watch is told, and goes on hearing
    const second = submit('w', '2');
    await submitter.compareAndSet(second.id, { raw: null }, second);
    await eventually('the task written after the missed changes', () => heard.includes('w:2'));
    stop();
    await worker.listening();
    worker.watch((_type, id) => heard.push(id), ['w']);
    await worker.listening();
    expect(watches).toHaveBeenCalledTimes(2);
  });

  it('fails closed before connect and after close', async () => {
    const unconnected = new TaskRecordStore(backend.node());
    await expect(unconnected.read('x:1')).rejects.toThrow('not connected');
    await unconnected.connect();
    await unconnected.close();
    await expect(unconnected.claimable(['x'], T0, T0, 1)).rejects.toThrow('not connected');
  });
});
