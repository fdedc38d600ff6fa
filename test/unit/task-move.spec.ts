import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { systemClock } from '../../lib/core/clock';
import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { encodeTask } from '../../lib/store/tasks/task.codec';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { TASK_MOVES_MAP, TaskMove } from '../../lib/tasks/task-move';
import { TaskWorker } from '../../lib/tasks/task-worker';

/*
 * The task move's own paths, on two stores of the memory backend (its implementation of the store contract): what the
 * fault test (test/faults/task-move.spec.ts) cannot make happen on cue, a live node acting between the move's read and
 * its compare-and-set, a task submitted meanwhile, and a run cut short between its two writes.
 */
async function stores() {
  const from = new MemoryBackend();
  const to = new MemoryBackend();
  const old = new TaskRecordStore(from);
  const arrived = new TaskRecordStore(to);
  await old.connect();
  await arrived.connect();
  const submit = (store: TaskStore, name: string, data: unknown) =>
    new TaskWorker(store, { instance: 'test/1', acquirer: 'test' }, { clock: systemClock, clockSkewMs: 100 }).submit({ type: 'work', name, data });
  const move = (tasks: TaskStore = old) => new TaskMove({ tasks, backend: from }, { tasks: arrived, backend: to }, { timeoutMs: 5_000 }).finish();
  const ids = async (store: TaskStore) => (await store.query({})).map((t) => t.id).sort();
  return { to, old, arrived, submit, move, ids, close: async () => void (await Promise.all([old.close(), arrived.close()])) };
}

describe('TaskMove', () => {
  it('moves every task off the old store; one the new store has already (same id) stays as it is there', async () => {
    const { old, arrived, submit, move, ids, close } = await stores();
    try {
      for (const name of ['a', 'b', 'c']) await submit(old, name, { from: 'old' });
      await submit(arrived, 'c', { from: 'new' });
      expect(await move()).toEqual({ moved: { pending: 2 }, alreadyThere: ['work:c'], left: [] });
      expect(await ids(old)).toEqual([]);
      expect(await ids(arrived)).toEqual(['work:a', 'work:b', 'work:c']);
      expect((await arrived.read('work:c')).task?.data).toEqual({ from: 'new' });
      expect((await arrived.read('work:a')).task?.data).toEqual({ from: 'old' });
    } finally {
      await close();
    }
  });

  it('a task running under a claim, or finished, on the old store replaces the same id still pending on the new one', async () => {
    const { old, arrived, submit, move, close } = await stores();
    try {
      await submit(old, 'tick', { from: 'old' });
      await submit(arrived, 'tick', { from: 'new' });
      const read = await old.read('work:tick');
      const claim = { instance: 'old/1', acquirer: 'old', epoch: 7, claimedAt: Date.now(), expiresAt: Date.now() + 60_000 };
      expect(await old.compareAndSet('work:tick', read, { ...read.task!, state: 'running', epoch: 7, claim })).toBe(true);
      expect(await move()).toEqual({ moved: {}, alreadyThere: ['work:tick'], left: [] });
      // The new store's nodes now wait for the old node's claim, as its own store would have had them do.
      expect((await arrived.read('work:tick')).task).toMatchObject({ state: 'running', claim, data: { from: 'old' } });
      // One finished on the old store replaces a pending copy too: it does not run again.
      await submit(old, 'once', { from: 'old' });
      await submit(arrived, 'once', { from: 'new' });
      const once = await old.read('work:once');
      expect(await old.compareAndSet('work:once', once, { ...once.task!, state: 'done', result: 1, finishedAt: Date.now() })).toBe(true);
      expect((await move()).alreadyThere).toEqual(['work:once']);
      expect((await arrived.read('work:once')).task).toMatchObject({ state: 'done', data: { from: 'old' } });
    } finally {
      await close();
    }
  });

  it('moves a backlog of 100 tasks several at once, every one of them once', async () => {
    const { old, arrived, submit, move, ids, close } = await stores();
    try {
      const names = Array.from({ length: 100 }, (_, i) => `t${String(i).padStart(3, '0')}`);
      for (const name of names) await submit(old, name, { name });
      expect(await move()).toEqual({ moved: { pending: 100 }, alreadyThere: [], left: [] });
      expect(await ids(old)).toEqual([]);
      expect(await ids(arrived)).toEqual(names.map((name) => `work:${name}`));
    } finally {
      await close();
    }
  });

  it('leaves on the old store, named, a task a live node changed after the move read it, and one submitted meanwhile', async () => {
    const { old, arrived, submit, move, ids, close } = await stores();
    try {
      for (const name of ['a', 'b']) await submit(old, name, {});
      // A live node on the old store: right after the move reads task a, it claims it (the text changes under the
      // move), and a new task is submitted there.
      const racing: TaskStore = Object.create(old);
      let raced = false;
      racing.read = async (id, options) => {
        const read = await old.read(id, options);
        if (id === 'work:a' && !raced && read.task) {
          raced = true;
          await old.compareAndSet(id, read, { ...read.task, state: 'running', epoch: 1, claim: { instance: 'live/1', acquirer: 'live', epoch: 1, claimedAt: Date.now(), expiresAt: Date.now() + 60_000 } });
          await submit(old, 'late', {});
        }
        return read;
      };
      const report = await move(racing);
      expect(report.moved).toEqual({ pending: 1 });
      expect([...report.left].sort()).toEqual(['work:a', 'work:late']);
      expect(await ids(old)).toEqual(['work:a', 'work:late']);
      expect(await ids(arrived)).toEqual(['work:b']);
    } finally {
      await close();
    }
  });

  it('finishes a move cut short between taking a task off the old store and creating it on the new one', async () => {
    const { to, old, arrived, submit, move, ids, close } = await stores();
    try {
      await submit(old, 'cut', { n: 1 });
      const { raw } = await old.read('work:cut');
      // What a run killed between its two writes leaves: the journal's entry, the task gone from the old store.
      await (await to.map(TASK_MOVES_MAP)).put('work:cut', raw!);
      expect(await old.compareAndSet('work:cut', { raw }, null)).toBe(true);
      expect(await move()).toEqual({ moved: {}, alreadyThere: [], left: [] });
      expect(await ids(arrived)).toEqual(['work:cut']);
      expect(encodeTask((await arrived.read('work:cut')).task!)).toBe(raw);
      expect(await (await to.map(TASK_MOVES_MAP)).list()).toEqual([]);
    } finally {
      await close();
    }
  });
});
