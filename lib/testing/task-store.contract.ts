import assert from 'node:assert/strict';
import type { TaskRecord } from '../store/tasks/task';
import type { TaskStore } from '../store/tasks/task-store';
import { encodeTask, finishEnds } from '../store/tasks/task.codec';
import { claimTerms, decideClaim, decideRenew } from '../tasks/task-claim.rules';
import { decideFinish } from '../tasks/task-outcome.rules';
import { decideGroupProgress } from '../tasks/task-group.rules';
import { decideSubmit } from '../tasks/task-submit.rules';
import { scanTasks } from '../store/tasks/task-store.queries';
import { reserves } from '../tasks/task-pulls';
import { assertWatchHearsNothing } from './reserving-task-store.assertions';
import { assertEqual } from './assertions';
import { eventually } from './eventually';
import { fixtureEachTest, testApi, type ContractOptions } from './test-api';

/** What {@link describeTaskStoreContract} is given for each test: two task stores on one backend (two nodes). */
export interface TaskStoreFixture {
  /** Two stores on one store's data, as two nodes have; the suite connects and closes them. */
  readonly stores: readonly [TaskStore, TaskStore];
  /** Called after each test, once the stores are closed (drop what the test wrote). */
  close(): Promise<void>;
}

const T0 = Date.now();
const submit = (type: string, name: string, priority = 0, now = T0): TaskRecord => decideSubmit(undefined, { type, name, priority, data: { name } }, now, 60_000).task;

/**
 * What every task store must do, run against each implementation. {@link describeStoreContracts} runs it on the
 * `TaskRecordStore` of a backend; a backend's native task store runs it directly.
 */
export function describeTaskStoreContract(name: string, setup: () => Promise<TaskStoreFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const eventTimeoutMs = options.eventTimeoutMs ?? 10_000;

  describe(`TaskStore contract: ${name}`, () => {
    const fixture = fixtureEachTest({ beforeEach, afterEach }, setup);

    it('creates once: a second create of the same id conflicts, and every writer reads what was stored', async () => {
      const [a, b] = fixture().stores;
      const task = submit('check', 'db');
      assert.equal(await a.compareAndSet(task.id, { raw: null }, task), true);
      assert.equal(await b.compareAndSet(task.id, { raw: null }, { ...task, priority: 9 }), false);
      assertEqual((await b.read(task.id)).task, task);
      assertEqual(await a.read('check:missing'), { raw: null, task: undefined });
    }, timeoutMs);

    it('writes only against the value read: of two claims on one read, one wins', async () => {
      const [a, b] = fixture().stores;
      const task = submit('t', 'n');
      await a.compareAndSet(task.id, { raw: null }, task);
      const readA = await a.read(task.id);
      const readB = await b.read(task.id);
      const claimA = decideClaim(readA.task!, { instance: 'a/1', acquirer: 'a' }, T0, 5_000);
      const claimB = decideClaim(readB.task!, { instance: 'b/1', acquirer: 'b' }, T0, 5_000);
      const results = await Promise.all([a.compareAndSet(task.id, readA, claimA.outcome === 'claimed' ? claimA.task : null), b.compareAndSet(task.id, readB, claimB.outcome === 'claimed' ? claimB.task : null)]);
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal((await a.read(task.id)).task?.state, 'running');
      // A purge is a compare-and-set too.
      const current = await b.read(task.id);
      assert.equal(await a.compareAndSet(task.id, readA, null), false);
      assert.equal(await a.compareAndSet(task.id, current, null), true);
      assert.equal((await b.read(task.id)).raw, null);
    }, timeoutMs);

    it('finds claimable tasks of the given types in claim order, without the rest', async () => {
      const [a, b] = fixture().stores;
      const tasks = [submit('x', 'low', 0, T0), submit('x', 'high', 5, T0 + 1), submit('x', 'early', 0, T0 - 5), submit('y', 'other', 9), { ...submit('x', 'later'), notBefore: T0 + 60_000 }];
      for (const t of tasks) await a.compareAndSet(t.id, { raw: null }, t);
      const held = submit('x', 'held');
      const claim = decideClaim(held, { instance: 'a/1', acquirer: 'a' }, T0, 1_000);
      await a.compareAndSet(held.id, { raw: null }, claim.outcome === 'claimed' ? claim.task : held);
      assert.deepEqual((await b.claimable(['x'], T0 + 10, T0, 10)).map((t) => t.name), ['high', 'early', 'low']);
      assert.deepEqual((await b.claimable(['x'], T0 + 10, T0, 2)).map((t) => t.name), ['high', 'early']);
      // Once the held task's claim expired before the given horizon, it is claimable too (abandoned).
      assert.ok((await b.claimable(['x'], T0 + 10, T0 + 2_000, 10)).map((t) => t.name).includes('held'), 'the abandoned task is claimable');
      assert.deepEqual(await b.claimable([], T0, T0, 10), []);
      assert.deepEqual((await b.query({ types: ['y'] })).map((t) => t.name), ['other']);
      assert.deepEqual((await b.query({ states: ['running'] })).map((t) => t.name), ['held']);
    }, timeoutMs);

    it('scans as the two queries it stands for: the claimable tasks and the uncounted ones, each with its own limit', async () => {
      const [a, b] = fixture().stores;
      const uncounted = (name: string, type = 's'): TaskRecord => ({ ...submit(type, name), state: 'done', finishedAt: T0, uncounted: true });
      const tasks = [submit('s', 'low', 0, T0), submit('s', 'high', 5, T0), submit('r', 'other', 9, T0), uncounted('u1'), uncounted('u2'), uncounted('u3', 'r')];
      for (const t of tasks) await a.compareAndSet(t.id, { raw: null }, t);
      await b.claimable(['s'], T0 + 10, T0, 1); // a store may learn from a first query (Hazelcast's windows)
      let before = b.operationCount();
      const claimable = await b.claimable(['s'], T0 + 10, T0, 1);
      const uncountedFound = await b.uncounted(['s'], 5);
      const apart = b.operationCount() - before;
      before = b.operationCount();
      const scanned = await scanTasks(b, ['s'], T0 + 10, T0, { claimable: 1, uncounted: 5 });
      const calls = b.operationCount() - before;
      assert.deepEqual(scanned.claimable.map((t) => t.name), ['high']);
      assert.deepEqual(scanned.uncounted.map((t) => t.name).sort(), ['u1', 'u2']);
      assertEqual(scanned.claimable, claimable);
      assertEqual(scanned.uncounted, uncountedFound);
      // Fewer calls than the two queries apart where the store scans (one on PostgreSQL and Redis); a store without
      // a scan of its own is asked the two apart.
      if (b.scan) assert.ok(calls < apart, `a scan of ${calls} calls, the two queries apart ${apart}`);
      assertEqual(await scanTasks(b, [], T0, T0, { claimable: 10, uncounted: 10 }), { claimable: [], uncounted: [] });
    }, timeoutMs);

    it('with reserve: holds what it answers for one worker, until the hold ends or the task is written', async () => {
      const [a, b] = fixture().stores;
      if (!reserves(a) || !reserves(b)) return assert.equal(a.reserve ?? b.reserve, undefined); // watched and raced for instead
      const tasks = [submit('h', 'low', 0, T0), submit('h', 'high', 5, T0), submit('h', 'mid', 2, T0), { ...submit('h', 'later'), notBefore: T0 + 60_000 }];
      const straggler: TaskRecord = { ...submit('h', 'ended'), state: 'done', finishedAt: T0, uncounted: true };
      for (const t of [...tasks, straggler]) await a.compareAndSet(t.id, { raw: null }, t);
      const now = Date.now();
      const first = await a.reserve(['h'], 'a/1', { count: 2, now, lapsedBefore: now, holdMs: 1_000, waitMs: 60_000, uncounted: 5 });
      assert.deepEqual(first.tasks.map((t) => t.name), ['high', 'mid']);
      assert.deepEqual(first.uncounted.map((t) => t.name), ['ended']); // the scan's stragglers, in the same call
      assert.equal(first.waits, false); // given as many as it asked for
      assert.equal(first.nextDueAt, T0 + 60_000); // the task backing off
      assertEqual(first.tasks[0], tasks[1]);
      // Held for a/1: neither another reserve nor a claim query answers them.
      const second = await b.reserve(['h'], 'b/1', { count: 5, now, lapsedBefore: now, holdMs: 1_000, waitMs: 60_000 });
      assert.deepEqual(second.tasks.map((t) => t.name), ['low']);
      assert.equal(second.waits, true); // found fewer than it asked for
      assert.deepEqual((await b.claimable(['h'], now, now, 10)).map((t) => t.name), []);
      // A reserved task written (claimed, then handed back) is in claim order again at once.
      const read = await a.read(tasks[2].id);
      const claim = decideClaim(read.task!, { instance: 'a/1', acquirer: 'a' }, now, 5_000);
      assert.equal(claim.outcome, 'claimed');
      assert.equal(await a.compareAndSet(tasks[2].id, read, claim.outcome === 'claimed' ? claim.task : null), true);
      const running = await a.read(tasks[2].id);
      assert.equal(await a.compareAndSet(tasks[2].id, running, { ...running.task!, state: 'pending', claim: undefined }), true);
      assert.deepEqual((await b.claimable(['h'], Date.now(), now, 10)).map((t) => t.name), ['mid']);
      // Once the holds end, those never written are answered again.
      await eventually('the holds to end', async () => (await b.claimable(['h'], Date.now(), now, 10)).length === 3, eventTimeoutMs);
      assert.deepEqual((await b.claimable(['h'], Date.now(), now, 10)).map((t) => t.name), ['high', 'mid', 'low']);
    }, timeoutMs);

    it('with reserve and a claim: claims what it answers exactly as decideClaim would, or answers it to claim by compare-and-set', async () => {
      const [a, b] = fixture().stores;
      if (!reserves(a) || !reserves(b)) return assert.equal(a.reserve ?? b.reserve, undefined); // watched and raced for instead
      const now = Date.now();
      const fresh = submit('k', 'fresh', 3, T0);
      const odd = { ...submit('k', 'odd "/\\ \u00e9', 2, T0), data: { list: [], big: 1795833299544123.5, nested: { state: 'pending' } } };
      const retry: TaskRecord = { ...submit('k', 'retry', 1, T0), epoch: 7, attempts: [{ attempt: 1, epoch: 7, instance: 'x/1', acquirer: 'x', startedAt: T0, endedAt: T0, outcome: 'retry', error: 'boom' }] };
      const failFast: TaskRecord = { ...submit('k', 'ff', 0, T0), group: { name: 'g', number: 1, failGroupFast: true } };
      for (const t of [fresh, odd, retry, failFast]) await a.compareAndSet(t.id, { raw: null }, t);
      const actor = { instance: 'b/1', acquirer: 'b' };
      const leases = new Map([['k', 30_000]]);
      const got = await b.reserve(['k'], actor.instance, { count: 10, now, lapsedBefore: now, holdMs: 60_000, waitMs: 60_000, claim: claimTerms(actor, now, leases, 500) });
      // Every task is answered once, claimed or to claim; whatever the store claimed is what decideClaim makes of it.
      assert.deepEqual([...got.claimed, ...got.tasks].map((t) => t.name).sort(), ['ff', 'fresh', 'odd "/\\ \u00e9', 'retry']);
      assert.equal(got.waits, true);
      for (const claimed of got.claimed) {
        const before = [fresh, odd, retry, failFast].find((t) => t.id === claimed.id)!;
        const decided = decideClaim(before, actor, now, 30_000, 500);
        assert.equal(decided.outcome, 'claimed');
        assertEqual(claimed, decided.outcome === 'claimed' ? decided.task : undefined);
        // Stored as answered: a write that compares with it lands.
        const read = await a.read(claimed.id);
        assertEqual(read.task, claimed);
        assert.equal(read.raw, encodeTask(claimed));
      }
      // A task already claimed or reserved is answered to no one else.
      const again = await a.reserve(['k'], 'a/1', { count: 10, now, lapsedBefore: now, holdMs: 60_000, waitMs: 60_000, claim: claimTerms({ instance: 'a/1', acquirer: 'a' }, now, leases, 500) });
      assert.deepEqual([...again.claimed, ...again.tasks], []);
      // Running under the claim: found as lapsed once it expired, and finished by a compare-and-set against it.
      for (const claimed of got.claimed) {
        const expiresAt = claimed.claim!.expiresAt;
        assert.ok((await a.claimable(['k'], expiresAt + 1, expiresAt + 1, 10)).some((t) => t.id === claimed.id), `${claimed.name} found lapsed`);
        assert.equal(await a.compareAndSet(claimed.id, { raw: encodeTask(claimed) }, { ...claimed, state: 'done', finishedAt: now }), true);
      }
    }, timeoutMs);

    it('with replaceEnds: writes a finish by its ends while the claim is the one read, keeping what lies between, and refuses it after any change at either end', async () => {
      const [a, b] = fixture().stores;
      if (!a.replaceEnds || !b.replaceEnds) return assert.equal(a.replaceEnds ?? b.replaceEnds, undefined); // finishes compare the whole text
      const actor = { instance: 'b/1', acquirer: 'b' };
      const now = Date.now();
      // A caller's data with the characters JSON escapes, a newline among them, and characters a store may count
      // otherwise than JavaScript does (two bytes in UTF-8; one character of two UTF-16 units).
      const pending = { ...submit('k', 'ends "/\\ \u00e9'), data: { text: 'line one\nline two \u{1F600}', list: [], big: 1795833299544123.5 } };
      const claimed = decideClaim(pending, actor, now, 30_000);
      assert.equal(claimed.outcome, 'claimed');
      const running = claimed.outcome === 'claimed' ? claimed.task : pending;
      await a.compareAndSet(running.id, { raw: null }, running);
      const read = await b.read(running.id);
      const done = decideFinish(read.task!, actor, running.epoch, { kind: 'done', result: { ok: 'yes\n' } }, now + 5, { baseMs: 1, factor: 1, maxMs: 1 });
      assert.equal(done.outcome, 'ok');
      const finished = done.outcome === 'ok' ? done.task : running;
      const ends = finishEnds(read, finished)!;
      assert.ok(ends, 'a plain finish is written by its ends');
      // Renewed since it was read: the tail (the claim's expiry) no longer matches, and nothing is written.
      const renewed = decideRenew(read.task!, actor, running.epoch, now + 1, 60_000);
      assert.equal(renewed.outcome, 'ok');
      if (renewed.outcome !== 'ok') return;
      assert.equal(await a.compareAndSet(running.id, read, renewed.task), true);
      assert.equal(await b.replaceEnds(running.id, ends.expected, ends.next, finished), false);
      assertEqual((await a.read(running.id)).task, renewed.task);
      // Against the renewed text: lands, and reads back as the finish decided, stored as its encoding.
      const fresh = await b.read(running.id);
      const again = decideFinish(fresh.task!, actor, running.epoch, { kind: 'done', result: { ok: 'yes\n' } }, now + 5, { baseMs: 1, factor: 1, maxMs: 1 });
      const next = again.outcome === 'ok' ? again.task : running;
      const endsNow = finishEnds(fresh, next)!;
      // The same claim (the tail) with another head (its attempt's start moved): nothing is written.
      const moved = { ...fresh.task!, attempts: fresh.task!.attempts.map((at) => ({ ...at, startedAt: at.startedAt + 1 })) };
      assert.equal(await a.compareAndSet(running.id, fresh, moved), true);
      assert.equal(await b.replaceEnds(running.id, endsNow.expected, endsNow.next, next), false);
      assertEqual((await a.read(running.id)).task, moved);
      assert.equal(await a.compareAndSet(running.id, { raw: encodeTask(moved) }, fresh.task!), true);
      assert.equal(await b.replaceEnds(running.id, endsNow.expected, endsNow.next, next), true);
      const after = await a.read(running.id);
      assertEqual(after.task, next);
      assert.equal(after.raw, encodeTask(next));
      // Finished: the same ends match no more, and a task that is not there is not written.
      assert.equal(await a.replaceEnds(running.id, endsNow.expected, endsNow.next, next), false);
      assert.equal(await a.replaceEnds('k:absent', endsNow.expected, endsNow.next, next), false);
      assert.equal((await a.read('k:absent')).raw, null);
      // Written as a compare-and-set is: found finished, not claimable.
      assert.deepEqual(await a.claimable(['k'], now + 120_000, now + 120_000, 10), []);
    }, timeoutMs);

    it('with reserve: wakes one waiting worker per task that becomes pending, the longest waiting first, and skips one gone or whose wait ended', async () => {
      const [a, b] = fixture().stores;
      if (!reserves(a) || !reserves(b)) return assert.equal(a.reserve ?? b.reserve, undefined); // watched and raced for instead
      const woken = { a: 0, b: 0, c: 0, d: 0 };
      const stopA = await a.awaitWork('a/1', () => woken.a++);
      const stopB = await b.awaitWork('b/1', () => woken.b++);
      const stopC = await b.awaitWork('c/1', () => woken.c++);
      const stopD = await b.awaitWork('d/1', () => woken.d++);
      try {
        const now = Date.now();
        // c waits first but is gone before any work comes; d's wait has ended (and it never renewed it); then a, then b.
        assert.deepEqual((await b.reserve(['w'], 'c/1', { count: 1, now, lapsedBefore: now, holdMs: 1_000, waitMs: 60_000 })).tasks, []);
        await stopC();
        assert.deepEqual((await b.reserve(['w'], 'd/1', { count: 1, now, lapsedBefore: now, holdMs: 1_000, waitMs: 0 })).tasks, []);
        assert.deepEqual((await a.reserve(['w'], 'a/1', { count: 1, now, lapsedBefore: now, holdMs: 1_000, waitMs: 60_000 })).tasks, []);
        assert.deepEqual((await b.reserve(['w', 'v'], 'b/1', { count: 1, now, lapsedBefore: now, holdMs: 1_000, waitMs: 60_000 })).tasks, []);
        await a.compareAndSet('w:1', { raw: null }, submit('w', '1'));
        await eventually('a woken', () => woken.a === 1, eventTimeoutMs);
        await a.compareAndSet('v:1', { raw: null }, submit('v', '1'));
        await eventually('b woken (it waits for both types)', () => woken.b === 1, eventTimeoutMs);
        assert.deepEqual(woken, { a: 1, b: 1, c: 0, d: 0 });
        // A worker given as many as it asked for waits no more; one given fewer waits again.
        assert.deepEqual((await a.reserve(['w'], 'a/1', { count: 1, now: Date.now(), lapsedBefore: now, holdMs: 1_000, waitMs: 60_000 })).tasks.map((t) => t.id), ['w:1']);
        assert.deepEqual((await b.reserve(['w', 'v'], 'b/1', { count: 2, now: Date.now(), lapsedBefore: now, holdMs: 1_000, waitMs: 60_000 })).tasks.map((t) => t.id), ['v:1']);
        await a.compareAndSet('w:2', { raw: null }, submit('w', '2'));
        await eventually('b woken again', () => woken.b === 2, eventTimeoutMs);
        assert.deepEqual(woken, { a: 1, b: 2, c: 0, d: 0 });
      } finally {
        await stopA();
        await stopB();
        await stopD();
      }
    }, timeoutMs);

    it('compares against the encoding of a task as a query found it, so a claim needs no read first', async () => {
      const [a, b] = fixture().stores;
      const task = submit('q', 'direct', 0, T0);
      await a.compareAndSet(task.id, { raw: null }, task);
      const [found] = await b.claimable(['q'], T0 + 10, T0, 1);
      assertEqual(found, task);
      const claim = decideClaim(found, { instance: 'b/1', acquirer: 'b' }, T0 + 10, 5_000);
      assert.equal(await b.compareAndSet(task.id, { raw: encodeTask(found) }, claim.outcome === 'claimed' ? claim.task : null), true);
      assert.equal(await a.compareAndSet(task.id, { raw: encodeTask(found) }, null), false); // changed since
    }, timeoutMs);

    it('finds finished tasks to purge: finished before the horizon and heard of by their group', async () => {
      const [a, b] = fixture().stores;
      const finished = (name: string, finishedAt: number, extra: Partial<TaskRecord> = {}): TaskRecord => ({ ...submit('p', name), state: 'done', finishedAt, ...extra });
      for (const t of [finished('old', T0 - 10_000), finished('new', T0), finished('waiting', T0 - 10_000, { uncounted: true }), submit('p', 'pending', 0, T0 - 20_000)]) {
        await a.compareAndSet(t.id, { raw: null }, t);
      }
      assert.deepEqual((await b.finishedBefore(T0 - 1_000, 10)).map((t) => t.name), ['old']);
      assert.deepEqual((await b.finishedBefore(T0 + 1, 10)).map((t) => t.name).sort(), ['new', 'old']);
    }, timeoutMs);

    it('signals tasks that become pending, by type, to every node', async () => {
      const [a, b] = fixture().stores;
      if (reserves(b)) return assertWatchHearsNothing(a, b, submit('quiet', 'x'), T0, eventTimeoutMs); // its workers reserve instead
      const heard: string[] = [];
      const told: Array<TaskRecord | undefined> = [];
      const stop = b.watch((type, id, written) => {
        heard.push(`${type} ${id}`);
        told.push(written);
      });
      await b.listening(); // the watch is in place where events are sent from: nothing written after it is missed
      const task = submit('recon', 'x');
      await a.compareAndSet(task.id, { raw: null }, task);
      await eventually('the signal', () => heard.includes('recon recon:x'), eventTimeoutMs);
      // The task as written comes with it, exactly: a claim compare-and-sets against it with no read first.
      assertEqual(told[0], task);
      assert.equal(encodeTask(told[0]!), (await b.read(task.id)).raw);
      // A claim (running) is no news for idle nodes; handing the task back (pending) is. Events of one key arrive
      // in order, so once the second signal is heard, a signal for the claim would have been heard before it.
      const pending = await a.read(task.id);
      const claim = decideClaim(pending.task!, { instance: 'a/1', acquirer: 'a' }, T0, 5_000);
      await a.compareAndSet(task.id, pending, claim.outcome === 'claimed' ? claim.task : null);
      const running = await a.read(task.id);
      await a.compareAndSet(task.id, running, { ...running.task!, state: 'pending', claim: undefined });
      await eventually('the second signal', () => heard.length >= 2, eventTimeoutMs);
      assert.deepEqual(heard, ['recon recon:x', 'recon recon:x']);
      stop();
    }, timeoutMs);

    it('tells a watch that asks for claims of every other node’s claim (instance and epoch), not its own, and not as pending work', async () => {
      const [a, b] = fixture().stores;
      if (reserves(b)) return assertWatchHearsNothing(a, b, submit('quiet', 'x'), T0, eventTimeoutMs); // its workers reserve instead
      const pending: string[] = [];
      const claims: string[] = [];
      const stop = b.watch((_type, id) => pending.push(id), ['fair'], { listener: (_type, id, claim) => claims.push(`${id} ${claim.instance} ${claim.epoch}`), except: 'b/1' });
      await b.listening();
      const claimAs = async (id: string, instance: string) => {
        const read = await a.read(id);
        const claim = decideClaim(read.task!, { instance, acquirer: instance }, T0, 5_000);
        if (claim.outcome !== 'claimed') throw new Error('not claimable');
        assert.equal(await a.compareAndSet(id, read, claim.task), true);
        return claim.claim.epoch;
      };
      await a.compareAndSet('fair:own', { raw: null }, submit('fair', 'own'));
      await a.compareAndSet('fair:other', { raw: null }, submit('fair', 'other'));
      await a.compareAndSet('unwatched:x', { raw: null }, submit('unwatched', 'x'));
      await claimAs('fair:own', 'b/1'); // its own: counted as it lands, never sent back
      await claimAs('unwatched:x', 'a/1');
      const epoch = await claimAs('fair:other', 'a/1');
      // Events of one key arrive in order: once the hand-back of the own task is heard, its claim would have been.
      const own = await a.read('fair:own');
      await a.compareAndSet('fair:own', own, { ...own.task!, state: 'pending', claim: undefined });
      await eventually('the claim and the hand-back', () => claims.length >= 1 && pending.filter((id) => id === 'fair:own').length >= 2, eventTimeoutMs);
      assert.deepEqual(claims, [`fair:other a/1 ${epoch}`]);
      assert.deepEqual(pending.sort(), ['fair:other', 'fair:own', 'fair:own']);
      stop();
    }, timeoutMs);

    it('tells a watch only of the types it names, and a watch of a type added later once it is listening', async () => {
      const [a, b] = fixture().stores;
      if (reserves(b)) return assertWatchHearsNothing(a, b, submit('quiet', 'x'), T0, eventTimeoutMs); // its workers reserve instead
      const heard: string[] = [];
      const stopFirst = b.watch((type, id) => heard.push(id), ['wanted']);
      await b.listening();
      await a.compareAndSet('other:1', { raw: null }, submit('other', '1'));
      await a.compareAndSet('wanted:1', { raw: null }, submit('wanted', '1'));
      await eventually('the wanted task', () => heard.includes('wanted:1'), eventTimeoutMs);
      // A second type, watched before the first watch ends (as a node that registers a handler does).
      const stopSecond = b.watch((type, id) => heard.push(id), ['wanted', 'late']);
      stopFirst();
      await b.listening();
      await a.compareAndSet('late:1', { raw: null }, submit('late', '1'));
      await a.compareAndSet('wanted:2', { raw: null }, submit('wanted', '2'));
      await eventually('the late and wanted tasks', () => heard.includes('late:1') && heard.includes('wanted:2'), eventTimeoutMs);
      assert.deepEqual(heard.filter((id) => id.startsWith('other:')), []);
      stopSecond();
    }, timeoutMs);

    it('keeps group records by compare-and-set', async () => {
      const [a, b] = fixture().stores;
      const member = { ...submit('t', 'ignored'), id: 't:g:1', name: undefined, group: { name: 'g', number: 1, total: 1 }, state: 'done' as const, result: 1 };
      const { group } = decideGroupProgress(undefined, member, T0);
      assert.equal(await a.compareAndSetGroup(group.id, { raw: null }, group), true);
      assert.equal(await b.compareAndSetGroup(group.id, { raw: null }, group), false);
      const read = await b.readGroup(group.id);
      assertEqual(read.group, group);
      assert.equal(await b.compareAndSetGroup(group.id, read, { ...group, joinSubmittedAt: T0 + 5 }), true);
      assert.equal(await a.compareAndSetGroup(group.id, read, { ...group, joinSubmittedAt: T0 + 9 }), false);
    }, timeoutMs);
  });
}
