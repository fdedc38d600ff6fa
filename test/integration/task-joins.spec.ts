import { systemClock } from '../../lib/core/clock';
import type { GroupJoinData, TaskRecord } from '../../lib/store/tasks/task';
import { TaskAdmin } from '../../lib/tasks/task-admin';
import { purgeExpired } from '../../lib/tasks/task-purge';
import { TaskActionRefusedError } from '../../lib/tasks/errors/task-action-refused.error';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { joinTaskId, parentJoinTaskId } from '../../lib/tasks/task-id.rules';
import { newGroupRecord } from '../../lib/tasks/task-group.rules';
import { eventually } from '../support/eventually';
import { TASK_STORES, taskNodes } from '../support/task-nodes';

/** A promise and the function that settles it: a handler waits on it until the test lets it go. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * Exactly one join per group (and per parent run) while operators act on its tasks: a retry refused or reopening a
 * joined group, purges while stragglers are still being counted or cut short by a lost answer, a parent purged or
 * submitted again while its sub-groups run. Each case once lost or doubled a join.
 */
describe.each(TASK_STORES)('group joins under operators’ actions, on %s', (_name, cluster) => {
  const nodes = taskNodes(cluster);
  const admin = (store: TaskStore) => new TaskAdmin(store, systemClock, { retentionMs: 86_400_000 });
  const submitGroup = async (submit: (input: object) => Promise<unknown>, count: number, extra: object = {}) => {
    for (let n = 1; n <= count; n++) await submit({ type: 't', group: { name: 'g', number: n, ...(n === count && { total: count }), ...extra }, data: n });
  };

  it('a refused retry (of a task that is done) leaves its group’s count alone: the group still joins, once', async () => {
    const joins: GroupJoinData[] = [];
    const held = gate();
    const w = await nodes.worker('a');
    w.handle('t', async (n) => {
      if (n !== 1) await held.wait;
      return n;
    });
    w.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    w.start();
    await submitGroup((input) => w.submit(input as never), 3);
    const store = nodes.stores[0];
    await eventually('task 1 counted', async () => (await store.readGroup('t:g')).group?.finished['1']);
    await expect(admin(store).retry('t:g:1')).rejects.toThrow(TaskActionRefusedError);
    expect(Object.keys((await store.readGroup('t:g')).group!.finished)).toEqual(['1']);
    held.open();
    await eventually('the join done', async () => (await store.read(joinTaskId('t', 'g'))).task?.state === 'done');
    expect(joins).toHaveLength(1);
    expect(joins[0].results).toEqual({ 1: 1, 2: 2, 3: 3 });
  });

  it('a retry while the group’s first join still runs: the new round waits for it, and each round joins once', async () => {
    const joins: GroupJoinData[] = [];
    const firstJoin = gate();
    let failOnce = true;
    const w = await nodes.worker('a');
    w.handle('t', async (n) => {
      if (n === 2 && failOnce) {
        failOnce = false;
        throw new Error('boom');
      }
      return n;
    }, { maxAttempts: 1 });
    w.onGroupFinished('t', async (join) => {
      joins.push(join);
      if (joins.length === 1) await firstJoin.wait;
    });
    w.start();
    await submitGroup((input) => w.submit(input as never), 2);
    await eventually('round 0’s join running', () => joins.length === 1);
    const store = nodes.stores[0];
    // A retry waits until its group counted every task's end: task 1's count may land after the join started.
    await eventually('both tasks counted', async () => (await store.uncounted(['t'], 10)).length === 0);
    await admin(store).retry('t:g:2');
    await eventually('the retried task done', async () => (await store.read('t:g:2')).task?.state === 'done');
    expect((await store.read(joinTaskId('t', 'g'))).task).toMatchObject({ state: 'running', data: { errors: { 2: 'boom' } } }); // not replaced while it runs
    firstJoin.open();
    await eventually('round 1’s join', () => joins.length === 2);
    expect(joins.map((j) => [j.round ?? 0, j.errors])).toEqual([[0, { 2: 'boom' }], [1, {}]]);
    expect(joins[1].results).toEqual({ 1: 1, 2: 2 });
  });

  it('a purge while a stopped group’s cancelled tasks are still uncounted keeps the group’s record: no second join', async () => {
    const joins: GroupJoinData[] = [];
    const held = gate();
    // a's scan, which counts the cancelled tasks, comes only after the purge: b's, started then.
    const w = await nodes.worker('a', { scanMs: 600_000 });
    // Task 1 fails once all three run: the other two are cancelled while they run.
    const running = gate();
    let started = 0;
    w.handle('t', async (n) => {
      if (++started === 3) running.open();
      await running.wait;
      if (n === 1) throw new Error('boom');
      await held.wait;
      return n;
    }, { maxAttempts: 1, leaseMs: 500 });
    w.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    w.start();
    await submitGroup((input) => w.submit(input as never), 3, { failGroupFast: true });
    const store = nodes.stores[0];
    await eventually('the join done', async () => (await store.read(joinTaskId('t', 'g'))).task?.state === 'done');
    await eventually('the failed task counted', async () => !(await store.read('t:g:1')).task?.uncounted);
    expect(await store.uncounted(['t'], 10)).toHaveLength(2);
    expect((await store.read('t:g:2')).task!.attempts.at(-1)).toMatchObject({ outcome: 'cancelled', error: 'its group t:g stopped at a failure (failGroupFast)' });
    expect(await admin(store).purge({ olderThanMs: 0 })).toBe(2); // the failed task and the join; the cancelled ones wait
    held.open();
    const b = await nodes.worker('b');
    b.handle('t', async (n) => n);
    b.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    b.start();
    await eventually('the cancelled tasks counted', async () => (await store.uncounted(['t'], 10)).length === 0);
    expect((await store.readGroup('t:g')).group?.joinSubmittedAt).toEqual(expect.any(Number));
    expect((await store.read(joinTaskId('t', 'g'))).task).toBeUndefined(); // no second join was created
    expect(joins).toHaveLength(1);
    // Once the cancelled runs' leases are over (their ids stay taken until then), the last of the group takes its record.
    let purged = 0;
    await eventually('the cancelled tasks purged', async () => (purged += await admin(store).purge({ olderThanMs: 0 })) === 2);
    expect((await store.readGroup('t:g')).group).toBeUndefined();
  });

  it('a purge cut short by a lost answer leaves no group record behind: the same group submitted again joins again', async () => {
    const joins: GroupJoinData[] = [];
    const store = await nodes.store();
    const removeGroup = store.compareAndSetGroup.bind(store);
    let loseOne = false;
    store.compareAndSetGroup = async (id, expected, next, options) => {
      if (next === null && loseOne) {
        loseOne = false;
        throw new Error('write task group: no answer within 10000 ms');
      }
      return removeGroup(id, expected, next, options);
    };
    const w = await nodes.worker('a', { retentionMs: 1, purgeMs: 0 }, store);
    w.handle('t', async (n) => n);
    w.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    w.start();
    await submitGroup((input) => w.submit(input as never), 2);
    await eventually('the join done', async () => (await store.read(joinTaskId('t', 'g'))).task?.state === 'done');
    await eventually('both tasks counted', async () => (await store.uncounted(['t'], 10)).length === 0);
    loseOne = true;
    await expect(purgeExpired(store, Date.now() + 10, 1)).rejects.toThrow('no answer');
    await purgeExpired(store, Date.now() + 10, 1);
    expect([await store.query({}), (await store.readGroup('t:g')).group]).toEqual([[], undefined]);
    await submitGroup((input) => w.submit(input as never), 2); // the next day's batch, same group name
    await eventually('its join', () => joins.length === 2);
  });

  it('a parent waiting for its sub-group’s join is neither purged nor replaced by a submit: its join comes once', async () => {
    const parentJoins: GroupJoinData[] = [];
    const held = gate();
    const w = await nodes.worker('a');
    w.handle('recon-parent', async (_data, context) => {
      await context.submit({ type: 'rs', group: { name: 'sys-x', number: 1, total: 1 } });
      return 'spawned';
    });
    w.handle('rs', async () => {
      await held.wait;
      return 1;
    });
    w.onGroupFinished('rs', () => 'joined');
    w.onGroupFinished('recon-parent', (join) => {
      parentJoins.push(join);
    });
    w.start();
    await w.submit({ type: 'recon-parent', name: 'sys-x' });
    const store = nodes.stores[0];
    await eventually('the parent done', async () => (await store.read('recon-parent:sys-x')).task?.state === 'done');
    expect(await admin(store).purge({ states: ['done'], olderThanMs: 0 })).toBe(0);
    expect((await w.submit({ type: 'recon-parent', name: 'sys-x', rerunFinished: true })).state).toBe('done'); // kept, not run again
    held.open();
    await eventually('the parent’s join', () => parentJoins.length === 1);
    expect(parentJoins[0].results).toEqual({ 'rs:sys-x': 'joined' });
  });

  it('a parent run again (rerunFinished) gets a join of its own, after the first run’s', async () => {
    const parentJoins: GroupJoinData[] = [];
    const w = await nodes.worker('a');
    let run = 0;
    w.handle('sync', async (_data, context) => {
      run++;
      for (let n = 1; n <= 2; n++) await context.submit({ type: 'part', group: { name: `run-${run}`, number: n, ...(n === 2 && { total: 2 }) } });
    });
    w.handle('part', async () => 'p');
    w.onGroupFinished('part', () => 'joined');
    w.onGroupFinished('sync', (join) => {
      parentJoins.push(join);
    });
    w.start();
    await w.submit({ type: 'sync', name: 'x', rerunFinished: true });
    await eventually('the first run’s join', () => parentJoins.length === 1);
    expect((await w.submit({ type: 'sync', name: 'x', rerunFinished: true })).state).toBe('pending');
    await eventually('the second run’s join', () => parentJoins.length === 2);
    expect(parentJoins.map((j) => Object.keys(j.results))).toEqual([['part:run-1'], ['part:run-2']]);
  });

  it('a cancel then a retry of a running task: no second run before the cancelled lease ends', async () => {
    let active = 0;
    let most = 0;
    const starts: Array<{ node: string; epoch: number; at: number }> = [];
    const handler = (node: string) => async (_data: unknown, context: { epoch: number; signal: AbortSignal }) => {
      starts.push({ node, epoch: context.epoch, at: Date.now() });
      most = Math.max(most, ++active);
      // Works on, never renewing: it learns of the cancel only when its lease ends (its signal fires then).
      await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
      active--;
    };
    const a = await nodes.worker('a');
    a.handle('job', handler('a'), { leaseMs: 800 });
    // b connects before the task is claimed: a connect slowed by a loaded machine must not eat the lease.
    const b = await nodes.worker('b');
    b.handle('job', handler('b'), { leaseMs: 800 });
    a.start();
    await a.submit({ type: 'job', name: 'x' });
    await eventually('a runs it', () => starts.length === 1);
    b.start();
    const store = nodes.stores[0];
    const cancelled = await admin(store).cancel('job:x');
    // The run the cancel hit: a's, unless a loaded machine outlived its lease first and a node claimed the task again.
    const { epoch } = cancelled.attempts.at(-1)!;
    const heldUntil = cancelled.heldUntil!;
    expect(heldUntil).toEqual(expect.any(Number));
    // Its id stays taken while the cancelled run may go on: asked just before the hold ends, however late this runs.
    const beforeHoldEnds = new TaskAdmin(store, { now: () => heldUntil - 1 }, { retentionMs: 86_400_000 });
    expect(await beforeHoldEnds.purge()).toBe(0);
    await admin(store).retry('job:x');
    const retried = await eventually('the retry runs', () => starts.find((s) => s.epoch > epoch), { timeoutMs: Math.max(0, heldUntil - Date.now()) + 10_000 });
    expect(most).toBe(1);
    expect(retried.at).toBeGreaterThanOrEqual(heldUntil);
  });

  it('a join whose group was never marked (its node died right after creating it) is not purged: no second join', async () => {
    const joins: GroupJoinData[] = [];
    const dying = await nodes.store();
    const write = dying.compareAndSetGroup.bind(dying);
    dying.compareAndSetGroup = async (id, expected, next, options) => {
      if (next?.joinSubmittedAt !== undefined) throw new Error('a died before marking its group');
      return write(id, expected, next, options);
    };
    const a = await nodes.worker('a', {}, dying);
    a.handle('t', async (n) => n);
    a.start();
    const b = await nodes.worker('b');
    b.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    b.start();
    await submitGroup((input) => a.submit(input as never), 2);
    const store = nodes.stores[1];
    await eventually('the join done', async () => (await store.read(joinTaskId('t', 'g'))).task?.state === 'done');
    await a.stop(100);
    expect(await admin(store).purge({ olderThanMs: 0 })).toBe(1); // task 1; the join waits for its group's mark, task 2 to be counted
    const c = await nodes.worker('c');
    c.handle('t', async (n) => n);
    c.start();
    await eventually('task 2 counted', async () => (await store.uncounted(['t'], 10)).length === 0);
    expect((await store.read(joinTaskId('t', 'g'))).task?.state).toBe('done'); // the one join, not a new one
    expect(joins).toHaveLength(1);
  });

  it('a parent named like a group of its own type: each has a join of its own, so a parent swept again never joins twice', async () => {
    const joins: GroupJoinData[] = [];
    const dying = await nodes.store();
    const write = dying.compareAndSet.bind(dying);
    dying.compareAndSet = async (id, expected, next, options) => {
      if (next?.subgroups?.joinSubmittedAt !== undefined) throw new Error('a died before marking the parent');
      return write(id, expected, next, options);
    };
    const a = await nodes.worker('a', {}, dying);
    a.handle('t', async (_n, context) => {
      await context.submit({ type: 'sub', group: { name: 's', number: 1, total: 1 } });
    });
    a.handle('sub', async () => 'sub');
    a.onGroupFinished('sub', () => 'sub joined');
    a.start();
    const b = await nodes.worker('b', { scanMs: 600_000 }); // runs the joins, sweeps nothing
    b.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    b.start();
    const store = nodes.stores[0];
    await a.submit({ type: 't', name: 'g' }); // the parent t:g; its own join is created, then a dies before marking it
    await eventually('the parent’s join', () => joins.length === 1);
    await a.stop(100);
    const c = await nodes.worker('c', { scanMs: 600_000 });
    c.handle('t', async (n) => n);
    c.start();
    await submitGroup((input) => c.submit(input as never), 2); // the group g of type t
    await eventually('the group’s join', () => joins.length === 2);
    expect((await store.read(joinTaskId('sub', 's'))).task?.uncounted).toBe(true); // its parent never heard of it
    const d = await nodes.worker('d'); // sweeps the sub-group's join a left uncounted, and with it the parent
    d.onGroupFinished('sub', () => 'sub joined');
    d.start();
    await eventually('the parent marked', async () => (await store.read('t:g')).task?.subgroups?.joinSubmittedAt !== undefined
      && !(await store.read(joinTaskId('sub', 's'))).task?.uncounted);
    await eventually('no join left to run', async () => (await store.query({ types: ['t#group-finished'], states: ['pending', 'running'] })).length === 0);
    expect(joins.map((j) => Object.keys(j.results).sort())).toEqual([['sub:s'], ['1', '2']]);
    expect((await store.read(joinTaskId('t', 'g'))).task?.joinOf).toMatch(/^group /);
    expect((await store.read(parentJoinTaskId('t', 'g'))).task?.joinOf).toMatch(/^parent /);
  });

  it('stragglers blocked for long (more than one scan takes) do not hide those after them: each scan goes on where the last stopped', async () => {
    const store = await nodes.store();
    const now = Date.now();
    // A parent finished with its sub-group joined, unmarked (its node died): the scan submits its join. For the first
    // 60, a join of an earlier run still waits (nobody runs joins of type p), so each stays blocked.
    const parent = (name: string, seq: number): TaskRecord => ({
      id: `p:${name}`, type: 'p', name, priority: 0, data: null, state: 'done', seq, submittedAt: now, notBefore: now, epoch: 2,
      attempts: [], finishedAt: now, uncounted: true, subgroups: { submitted: ['c:s'], joined: { 'c:s': { state: 'done', result: 1 } } },
    });
    for (let i = 0; i < 60; i++) {
      expect(await store.compareAndSet(`p:b${i}`, { raw: null }, parent(`b${i}`, i))).toBe(true);
      const earlier = { id: parentJoinTaskId('p', `b${i}`), type: 'p#group-finished', name: `b${i}`, priority: 0, data: null, state: 'pending' as const,
        seq: i, submittedAt: now, notBefore: now, epoch: 0, attempts: [], joinOf: 'parent 1' };
      expect(await store.compareAndSet(earlier.id, { raw: null }, earlier)).toBe(true);
    }
    expect(await store.compareAndSet('p:late', { raw: null }, parent('late', 1_000))).toBe(true);
    const w = await nodes.worker('a', {}, store);
    w.handle('p', async () => undefined);
    w.start();
    await eventually('the last straggler counted', async () => !(await store.read('p:late')).task?.uncounted);
    expect((await store.read(parentJoinTaskId('p', 'late'))).task).toMatchObject({ state: 'pending', joinOf: 'parent 2' });
    expect((await store.uncounted(['p'], 100)).length).toBe(60); // the blocked ones wait for their earlier join
  });

  it('a group whose tasks were purged before its join is submitted again under its name: it joins again', async () => {
    const joins: GroupJoinData[] = [];
    const w = await nodes.worker('a');
    w.handle('t', async (n) => n);
    w.onGroupFinished('t', (join) => {
      joins.push(join);
    });
    w.start();
    await submitGroup((input) => w.submit(input as never), 2);
    const store = nodes.stores[0];
    await eventually('the join done, every task counted', async () =>
      (await store.read(joinTaskId('t', 'g'))).task?.state === 'done' && (await store.uncounted(['t'], 10)).length === 0);
    expect(await admin(store).purge({ types: ['t'], olderThanMs: 0 })).toBe(2); // the tasks; the join stays
    expect((await store.readGroup('t:g')).group).toBeUndefined();
    await submitGroup((input) => w.submit(input as never), 2);
    await eventually('the second group’s join', () => joins.length === 2);
  });

  it('a task of a fail-fast group that stopped is cancelled where it is claimed, not run, before the stop reaches it', async () => {
    const ran: number[] = [];
    const w = await nodes.worker('a');
    w.handle('t', async (n) => {
      ran.push(n as number);
      return n;
    });
    // The group stopped at task 1's failure on another node, which has not cancelled the rest yet.
    for (const n of [2, 3]) await w.submit({ type: 't', group: { name: 'g', number: n, ...(n === 3 && { total: 3 }), failGroupFast: true }, data: n });
    const store = nodes.stores[0];
    const task = (await store.read('t:g:2')).task!;
    const read = await store.readGroup('t:g');
    const stopped = { ...newGroupRecord(task), finished: { 1: { state: 'failed' as const, error: 'boom' } }, joinSubmittedAt: Date.now() };
    expect(await store.compareAndSetGroup('t:g', read, stopped)).toBe(true);
    w.start();
    await eventually('2 and 3 cancelled', async () => (await store.read('t:g:2')).task?.state === 'cancelled' && (await store.read('t:g:3')).task?.state === 'cancelled');
    expect(ran).toEqual([]);
    expect((await store.read('t:g:3')).task!.attempts).toEqual([]); // never claimed
  });

  it('a retry waits until its group counted every end: a stopped group’s cancelled tasks never stop the new round', async () => {
    const w = await nodes.worker('a', { scanMs: 600_000 }); // the cancelled tasks stay uncounted
    w.handle('t', async (n) => {
      if (n === 1) throw new Error('boom');
      return new Promise(() => undefined);
    }, { maxAttempts: 1 });
    w.onGroupFinished('t', () => 'joined');
    w.start();
    await submitGroup((input) => w.submit(input as never), 3, { failGroupFast: true });
    const store = nodes.stores[0];
    await eventually('task 1 counted, 2 and 3 cancelled', async () => !(await store.read('t:g:1')).task?.uncounted && (await store.uncounted(['t'], 10)).length === 2);
    await expect(admin(store).retry('t:g:1')).rejects.toThrow(/its group has not counted the end of t:g:\d/);
    expect((await store.read('t:g:1')).task!.state).toBe('failed');
  });

  it('a parent run again whose sub-tasks are all remembered has no sub-group to wait for: it is not kept for ever', async () => {
    const w = await nodes.worker('a');
    let runs = 0;
    w.handle('recon-parent', async (_data, context) => {
      runs++;
      for (let n = 1; n <= 2; n++) await context.submit({ type: 'rs', group: { name: 'sys-x', number: n, ...(n === 2 && { total: 2 }) } });
    });
    w.handle('rs', async () => 'p');
    w.onGroupFinished('rs', () => 'joined');
    w.onGroupFinished('recon-parent', () => 'done');
    w.start();
    const store = nodes.stores[0];
    const parentJoined = async () => (await store.read(parentJoinTaskId('recon-parent', 'sys-x'))).task?.state === 'done';
    await w.submit({ type: 'recon-parent', name: 'sys-x', rerunFinished: true });
    await eventually('the first run’s join', parentJoined);
    await w.submit({ type: 'recon-parent', name: 'sys-x', rerunFinished: true });
    await eventually('the second run done', async () => runs === 2 && (await store.read('recon-parent:sys-x')).task?.state === 'done');
    expect((await store.read('recon-parent:sys-x')).task!.subgroups).toBeUndefined();
    expect((await w.submit({ type: 'recon-parent', name: 'sys-x', rerunFinished: true })).state).toBe('pending'); // runs again
  });

  it('a parent run again after part of its sub-group was purged: the group joins again for the new run, and so does the parent', async () => {
    const parentJoins: GroupJoinData[] = [];
    const slow = gate();
    const w = await nodes.worker('a');
    w.handle('parent', async (_data, context) => {
      for (const number of [1, 2]) await context.submit({ type: 'sub', group: { name: 'g', number, ...(number === 2 && { total: 2 }) } });
    });
    w.handle('sub', async (_data, context) => {
      if (context.task.group!.number === 2 && parentJoins.length === 0) await slow.wait;
      return context.task.group!.number;
    });
    w.onGroupFinished('sub', (join) => Object.keys(join.results).length);
    w.onGroupFinished('parent', (join) => {
      parentJoins.push(join);
    });
    w.start();
    const store = nodes.stores[0];
    await w.submit({ type: 'parent', name: 'p', rerunFinished: true });
    const sub1 = await eventually('sub 1 done', async () => {
      const { task } = await store.read('sub:g:1');
      return task?.state === 'done' && !task.uncounted && task;
    });
    // Sub 2 ends at a later millisecond than sub 1, so a purge by age can take sub 1 and leave sub 2.
    await eventually('the clock past sub 1’s end', () => Date.now() > sub1.finishedAt!, { intervalMs: 1 });
    slow.open();
    await eventually('the first run’s join', () => parentJoins.length === 1);
    const sub2 = (await store.read('sub:g:2')).task!;
    // The purge's clock stopped at sub 2's end: real time passing between picking the age and the purge reading its
    // clock (a loaded machine) would move the cut past sub 2.
    const atSub2sEnd = new TaskAdmin(store, { now: () => sub2.finishedAt! }, { retentionMs: 86_400_000 });
    expect(await atSub2sEnd.purge({ types: ['sub'], olderThanMs: sub2.finishedAt! - sub1.finishedAt! })).toBe(1); // sub 1 only: sub 2 is newer
    expect((await store.read('sub:g:1')).task).toBeUndefined();
    await w.submit({ type: 'parent', name: 'p', rerunFinished: true }); // its sub 1 is new, its sub 2 remembered
    await eventually('the second run’s join', () => parentJoins.length === 2);
    expect(parentJoins[1].results).toEqual({ 'sub:g': 2 });
  });

  it('a retry of a grouped task whose group’s record was purged is refused (its group could never join)', async () => {
    const w = await nodes.worker('a');
    w.handle('t', async () => {
      throw new Error('boom');
    }, { maxAttempts: 1 });
    w.onGroupFinished('t', () => 'joined');
    w.start();
    await submitGroup((input) => w.submit(input as never), 2);
    const store = nodes.stores[0];
    await eventually('the join done, ends counted', async () =>
      (await store.read(joinTaskId('t', 'g'))).task?.state === 'done' && (await store.uncounted(['t'], 10)).length === 0);
    const record = await store.readGroup('t:g');
    expect(await store.compareAndSetGroup('t:g', record, null)).toBe(true); // as a purge does, just before the group's last task
    await expect(admin(store).retry('t:g:2')).rejects.toThrow('its group\'s record is gone (purged)');
    expect((await store.read('t:g:2')).task!.state).toBe('failed');
  });
});
