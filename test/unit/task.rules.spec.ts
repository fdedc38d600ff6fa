import type { TaskGroupRecord, TaskRecord } from '../../lib/store/tasks/task';
import { claimTerms, decideClaim, decideRenew, type TaskActor } from '../../lib/tasks/task-claim.rules';
import { compareReady } from '../../lib/store/tasks/task-store.rules';
import { counted, decideGroupProgress, decideParentJoin, decideReopen, joinTask, recordSubgroupJoin } from '../../lib/tasks/task-group.rules';
import { joinTaskId, taskId } from '../../lib/tasks/task-id.rules';
import { backoffDelay, decideCancel, decideFinish, decideRetry, isPurgeable } from '../../lib/tasks/task-outcome.rules';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';

const T0 = 1_700_000_000_000;
const LEASE = 5_000;
const SKEW = 100;
const BACKOFF = { baseMs: 1_000, factor: 2, maxMs: 30_000 };
const a: TaskActor = { instance: 'a/1', acquirer: 'a' };
const b: TaskActor = { instance: 'b/1', acquirer: 'b' };

function created(input: Parameters<typeof decideSubmit>[1], now = T0): TaskRecord {
  const d = decideSubmit(undefined, input, now, 60_000);
  if (d.outcome !== 'created') throw new Error('expected a new task');
  return d.task;
}
function claimed(task: TaskRecord, actor: TaskActor, now: number) {
  const d = decideClaim(task, actor, now, LEASE, SKEW);
  if (d.outcome !== 'claimed') throw new Error(`expected a claim, got ${d.outcome === 'refused' ? d.reason : d.outcome}`);
  return d;
}
function ok(d: ReturnType<typeof decideFinish>): TaskRecord {
  if (d.outcome !== 'ok') throw new Error(d.message);
  return d.task;
}

describe('task rules (seed 004)', () => {
  it('names tasks by type and name, or type, group and number (the total is not part of the id)', () => {
    expect(taskId({ type: 'recon-parent', name: 'recon-system-x' })).toBe('recon-parent:recon-system-x');
    expect(taskId({ type: 'recon-record-set', group: { name: 'recon-system-x', number: 7 } })).toBe('recon-record-set:recon-system-x:7');
    expect(taskId({ type: 'recon-record-set', group: { name: 'recon-system-x', number: 100, total: 100 } })).toBe('recon-record-set:recon-system-x:100');
    expect(joinTaskId('recon-record-set', 'recon-system-x')).toBe('recon-record-set#group-finished:recon-system-x');
    expect(() => taskId({ type: 'a:b', name: 'x' })).toThrow(/type/);
    expect(() => taskId({ type: 't' })).toThrow(/either a name/);
    expect(() => taskId({ type: 't', group: { name: 'g', number: 5, total: 3 } })).toThrow(/group.total/);
  });

  it('with rerunFinished, a fixed id runs again once finished but never twice at a time (at most once in parallel)', () => {
    const first = created({ type: 'sync', name: 'system-x', rerunFinished: true });
    expect(decideSubmit(first, { type: 'sync', name: 'system-x', rerunFinished: true }, T0 + 1, 60_000).outcome).toBe('exists');
    const run = claimed(first, a, T0 + 2).task;
    const done = ok(decideFinish(run, a, run.claim!.epoch, { kind: 'done', result: null }, T0 + 3, BACKOFF, 3));
    expect(decideSubmit(done, { type: 'sync', name: 'system-x' }, T0 + 4, 60_000).outcome).toBe('exists'); // remembered
    const again = decideSubmit(done, { type: 'sync', name: 'system-x', rerunFinished: true }, T0 + 4, 60_000);
    expect(again.outcome).toBe('created');
    expect(again.task.epoch).toBe(done.epoch); // fencing continues above the finished run
    expect(() => decideSubmit(undefined, { type: 'p', group: { name: 'g', number: 1 }, rerunFinished: true }, T0, 60_000)).toThrow(/rerunFinished/);
  });

  it('ignores a submit whose id exists (pending, running, or finished within the retention window) and returns it', () => {
    const task = created({ type: 'check', name: 'db', data: { n: 1 } });
    expect(decideSubmit(task, { type: 'check', name: 'db', data: { n: 2 } }, T0 + 10, 60_000)).toEqual({ outcome: 'exists', task });
    const done = ok(decideFinish(claimed(task, a, T0).task, a, claimed(task, a, T0).claim.epoch, { kind: 'done', result: 42 }, T0 + 1_000, BACKOFF));
    expect(decideSubmit(done, { type: 'check', name: 'db' }, T0 + 30_000, 60_000).outcome).toBe('exists'); // a redeploy does not run it again
    const again = decideSubmit(done, { type: 'check', name: 'db' }, T0 + 62_000, 60_000);
    expect(again.outcome).toBe('created');
    expect(again.task.epoch).toBe(done.epoch); // the next claim's epoch continues above the purged one's
  });

  it('claims with an epoch above every earlier claim, refuses a held task, and takes over one whose lease lapsed for every node', () => {
    const task = created({ type: 't', name: 'n' });
    const first = claimed(task, a, T0);
    expect(first.claim.epoch).toBe((T0 + SKEW) * 1000);
    expect(decideClaim(first.task, b, T0 + LEASE + SKEW - 1, LEASE, SKEW)).toEqual({ outcome: 'refused', reason: 'held' });
    const second = claimed(first.task, b, T0 + LEASE + SKEW + 1);
    expect(second.claim.epoch).toBeGreaterThan(first.claim.epoch);
    expect(second.task.attempts.map((x) => [x.acquirer, x.outcome])).toEqual([['a', 'lapsed'], ['b', undefined]]);
  });

  it('fences: a handler that lost its lease can neither renew nor finish, and its finish never overwrites the new claim', () => {
    const task = created({ type: 't', name: 'n' });
    const first = claimed(task, a, T0);
    // a renews in time; after its own expiry minus the skew it may not (another node may have claimed it).
    expect(decideRenew(first.task, a, first.claim.epoch, T0 + 1_000, LEASE, SKEW).outcome).toBe('ok');
    expect(decideRenew(first.task, a, first.claim.epoch, T0 + LEASE - SKEW, LEASE, SKEW).outcome).toBe('lease-lost');
    const second = claimed(first.task, b, T0 + LEASE + SKEW + 1);
    expect(decideRenew(second.task, a, first.claim.epoch, T0 + 6_000, LEASE, SKEW).outcome).toBe('lease-lost');
    expect(decideFinish(second.task, a, first.claim.epoch, { kind: 'done', result: 'stale' }, T0 + 6_000, BACKOFF)).toMatchObject({
      outcome: 'lease-lost', message: expect.stringContaining(`claimed by b with epoch ${second.claim.epoch}`),
    });
    expect(ok(decideFinish(second.task, b, second.claim.epoch, { kind: 'done', result: 'fresh' }, T0 + 6_100, BACKOFF)).result).toBe('fresh');
  });

  it('retries with backoff up to maxAttempts, honours a retry-later delay, and sends invalid tasks straight to invalid', () => {
    let task = created({ type: 't', name: 'n', maxAttempts: 3 });
    let now = T0;
    const notBefores: number[] = [];
    for (let i = 0; i < 2; i++) {
      const c = claimed(task, a, now);
      task = ok(decideFinish(c.task, a, c.claim.epoch, { kind: 'failed', error: `boom ${i}` }, now, BACKOFF));
      expect(task.state).toBe('pending');
      notBefores.push(task.notBefore - now);
      expect(decideClaim(task, a, now + 1, LEASE, SKEW)).toEqual({ outcome: 'refused', reason: 'backing-off' });
      now = task.notBefore;
    }
    expect(notBefores).toEqual([1_000, 2_000]);
    const last = claimed(task, a, now);
    task = ok(decideFinish(last.task, a, last.claim.epoch, { kind: 'failed', error: 'boom 2' }, now, BACKOFF));
    expect(task.state).toBe('failed');
    expect(task.attempts.map((x) => x.error)).toEqual(['boom 0', 'boom 1', 'boom 2']);

    const later = claimed(created({ type: 't', name: 'r' }), a, T0);
    expect(ok(decideFinish(later.task, a, later.claim.epoch, { kind: 'retry', error: 'busy', delayMs: 7_000 }, T0, BACKOFF)).notBefore).toBe(T0 + 7_000);
    const bad = claimed(created({ type: 't', name: 'i' }), a, T0);
    expect(ok(decideFinish(bad.task, a, bad.claim.epoch, { kind: 'invalid', error: 'no such record' }, T0, BACKOFF)).state).toBe('invalid');
    expect(backoffDelay(10, BACKOFF)).toBe(30_000);
  });

  it('orders claims by priority, then submit order; an operator can cancel a running task and retry a failed one', () => {
    const low = created({ type: 't', name: 'low', priority: 0 }, T0);
    const high = created({ type: 't', name: 'high', priority: 5 }, T0 + 2);
    const early = created({ type: 't', name: 'early', priority: 0 }, T0 - 1);
    expect([low, high, early].sort(compareReady).map((t) => t.name)).toEqual(['high', 'early', 'low']);
    const running = claimed(low, a, T0);
    const cancelled = decideCancel(running.task, T0 + 1, 'cancelled by an operator', SKEW)!;
    expect(cancelled.state).toBe('cancelled');
    expect(decideRenew(cancelled, a, running.claim.epoch, T0 + 2, LEASE, SKEW).outcome).toBe('lease-lost');
    // Its handler runs on until its lease ends (it learns of the cancel at its next renewal): no claim before that.
    expect(cancelled.heldUntil).toBe(running.claim.expiresAt + SKEW);
    const retried = decideRetry(cancelled, T0 + 3)!;
    expect(retried).toMatchObject({ state: 'pending', notBefore: running.claim.expiresAt + SKEW });
    expect(isPurgeable(cancelled, running.claim.expiresAt + SKEW - 1, 0, true)).toBe(false); // its id stays taken while it may run
    expect(decideRetry(retried, T0 + 4)).toBeUndefined();
    expect(decideClaim(retried, b, running.claim.expiresAt + SKEW - 1, LEASE, SKEW).outcome).toBe('refused');
    expect(decideClaim({ ...retried, notBefore: T0 }, b, running.claim.expiresAt + SKEW - 1, LEASE, SKEW)).toEqual({ outcome: 'refused', reason: 'held' });
    expect(decideClaim(retried, b, running.claim.expiresAt + SKEW, LEASE, SKEW).outcome).toBe('claimed');
    expect(decideRetry(decideCancel(low, T0 + 1)!, T0 + 3)).toMatchObject({ notBefore: T0 + 3 }); // it never ran: at once
  });

  it('the seed’s recon example: 100 grouped sub-tasks, the total on the last only; exactly one join with 100 results', () => {
    let group: TaskGroupRecord | undefined;
    const joins: unknown[] = [];
    const order = Array.from({ length: 100 }, (_, i) => i + 1).sort((x, y) => ((x * 37) % 101) - ((y * 37) % 101)); // finish out of order
    for (const n of order) {
      const task = created({ type: 'recon-record-set', group: { name: 'recon-system-x', number: n, ...(n === 100 && { total: 100 }) }, parent: 'recon-parent:recon-system-x' });
      const c = claimed(task, n % 2 ? a : b, T0);
      const done = ok(decideFinish(c.task, n % 2 ? a : b, c.claim.epoch, { kind: 'done', result: { records: n } }, T0 + n, BACKOFF));
      const progress = decideGroupProgress(group, done, T0 + n);
      group = progress.group;
      if (progress.join) joins.push(progress.join);
      // The same completion seen again (a retried write) never joins twice.
      expect(decideGroupProgress(group, done, T0 + n).join).toBeUndefined();
    }
    expect(joins).toHaveLength(1);
    expect(joins[0]).toMatchObject({ group: 'recon-system-x', type: 'recon-record-set', total: 100, failedFast: false, errors: {} });
    expect(Object.keys((joins[0] as { results: object }).results)).toHaveLength(100);
    expect(group).toMatchObject({ parent: 'recon-parent:recon-system-x', total: 100 });
  });

  it('failGroupFast: one failure joins at once with the errors and names the tasks to cancel', () => {
    const position = (number: number) => ({ name: 'g', number, total: 5, failGroupFast: true });
    const ok1 = created({ type: 't', group: position(1) });
    const c1 = claimed(ok1, a, T0);
    let progress = decideGroupProgress(undefined, ok(decideFinish(c1.task, a, c1.claim.epoch, { kind: 'done', result: 1 }, T0, BACKOFF)), T0);
    const bad = created({ type: 't', group: position(2), maxAttempts: 1 });
    const c2 = claimed(bad, a, T0);
    progress = decideGroupProgress(progress.group, ok(decideFinish(c2.task, a, c2.claim.epoch, { kind: 'failed', error: 'broken' }, T0, BACKOFF)), T0);
    expect(progress.join).toMatchObject({ failedFast: true, results: { 1: 1 }, errors: { 2: 'broken' } });
    expect(progress.cancel).toEqual([3, 4, 5]);
  });

  it('counts a lapsed attempt toward maxAttempts: a task that kills its node every time fails instead of moving on', () => {
    let task = created({ type: 't', name: 'crashy', maxAttempts: 2 });
    let now = T0;
    const first = claimed(task, a, now);
    now += LEASE + SKEW + 1;
    const second = claimed(first.task, b, now); // the first attempt lapsed
    now += LEASE + SKEW + 1;
    const third = decideClaim(second.task, a, now, LEASE, SKEW);
    expect(third.outcome).toBe('exhausted');
    task = (third as { task: TaskRecord }).task;
    expect(task).toMatchObject({ state: 'failed', finishedAt: now });
    expect(task.attempts.map((x) => x.outcome)).toEqual(['lapsed', 'lapsed']);
    // Without a number on the submit, the claiming handler's option decides.
    const open = claimed(created({ type: 't', name: 'open' }), a, T0);
    expect(decideClaim(open.task, b, T0 + LEASE + SKEW + 1, LEASE, SKEW, 1).outcome).toBe('exhausted');
    expect(decideClaim(open.task, b, T0 + LEASE + SKEW + 1, LEASE, SKEW, 2).outcome).toBe('claimed');
  });

  it('a parent joins once it finished and every sub-group it submitted joined, in either order, and only once', () => {
    const parent = created({ type: 'recon-parent', name: 'x' });
    const run = claimed(parent, a, T0);
    const subgroups = ['recon-record-set:x', 'recon-accounts:x'];
    // One sub-group joins while the parent still runs: recorded, nothing due.
    const early = recordSubgroupJoin(run.task, subgroups[0], { state: 'done', result: { matched: 10 } });
    expect(decideParentJoin(early, T0)).toBeUndefined();
    const finished = ok(decideFinish(early, a, run.claim.epoch, { outcome: { kind: 'done', result: 'split' }, subgroups }, T0 + 1, BACKOFF));
    expect(finished.uncounted).toBeUndefined(); // the other sub-group's join will submit it
    expect(decideParentJoin(finished, T0 + 1)).toBeUndefined();
    const last = recordSubgroupJoin(finished, subgroups[1], { state: 'failed', error: 'timeout' });
    const due = decideParentJoin(last, T0 + 2)!;
    expect(due.join).toEqual({ group: 'x', type: 'recon-parent', total: 2, results: { 'recon-record-set:x': { matched: 10 } }, errors: { 'recon-accounts:x': 'timeout' }, failedFast: false });
    expect(decideParentJoin(due.parent, T0 + 3)).toBeUndefined();
    // Both joined before the parent finished: its finish marks it, so the finisher (or a scan) submits the join.
    const both = recordSubgroupJoin(recordSubgroupJoin(run.task, subgroups[0], { state: 'done' }), subgroups[1], { state: 'done' });
    const late = ok(decideFinish(both, a, run.claim.epoch, { outcome: { kind: 'done' }, subgroups }, T0 + 4, BACKOFF));
    expect(late.uncounted).toBe(true);
    expect(decideParentJoin(late, T0 + 4)?.join.total).toBe(2);
    // A task that submitted no sub-groups has no join of its own.
    const plain = claimed(created({ type: 'recon-parent', name: 'y' }), a, T0);
    expect(decideParentJoin(ok(decideFinish(plain.task, a, plain.claim.epoch, { kind: 'done' }, T0, BACKOFF)), T0)).toBeUndefined();
  });

  it('an operator retry reopens a joined group for a new round, whose join replaces the finished one once', () => {
    const position = { name: 'g', number: 1, total: 1 };
    const c = claimed(created({ type: 't', group: position, maxAttempts: 1 }), a, T0);
    const failed = ok(decideFinish(c.task, a, c.claim.epoch, { kind: 'failed', error: 'broken' }, T0, BACKOFF));
    expect(decideRetry(failed, T0)).toBeUndefined(); // not before its group counted it
    const first = decideGroupProgress(undefined, failed, T0);
    expect(first.join).toMatchObject({ errors: { 1: 'broken' } });
    const created1 = joinTask(first.join!, first.joinOf!, undefined, T0);
    if (created1.outcome !== 'create') throw new Error(`expected a join, got ${created1.outcome}`);
    const doneJoin: TaskRecord = { ...created1.task, state: 'done', finishedAt: T0 + 1 };
    expect(joinTask(first.join!, first.joinOf!, undefined, T0 + 2, doneJoin)).toEqual({ outcome: 'exists' }); // the same round never joins twice
    const reopened = decideReopen(first.group, 1);
    expect(reopened).toMatchObject({ round: 1, finished: {} });
    expect(reopened.joinSubmittedAt).toBeUndefined();
    const retried = decideRetry({ ...failed, uncounted: undefined }, T0 + 3)!;
    const c2 = claimed(retried, b, T0 + 3);
    const second = decideGroupProgress(reopened, ok(decideFinish(c2.task, b, c2.claim.epoch, { kind: 'done', result: 'fixed' }, T0 + 4, BACKOFF)), T0 + 4);
    expect(second.join).toMatchObject({ round: 1, results: { 1: 'fixed' }, errors: {} });
    // While round 0's join runs (or before its parent heard of it), round 1's waits: it never replaces a live join.
    expect(joinTask(second.join!, second.joinOf!, undefined, T0 + 5, { ...doneJoin, state: 'running' })).toMatchObject({ outcome: 'blocked' });
    expect(joinTask(second.join!, second.joinOf!, undefined, T0 + 5, { ...doneJoin, uncounted: true })).toMatchObject({ outcome: 'blocked' });
    const again = joinTask(second.join!, second.joinOf!, undefined, T0 + 5, doneJoin);
    expect(again).toMatchObject({ outcome: 'create', task: { state: 'pending', data: { round: 1 } } });
    const doneAgain = { ...(again as { task: TaskRecord }).task, state: 'done' as const, finishedAt: T0 + 6 };
    expect(joinTask(second.join!, second.joinOf!, undefined, T0 + 6, doneAgain)).toEqual({ outcome: 'exists' });
  });

  it('a group submitted again under the same name after a purge is a new generation, with a join of its own', () => {
    const finish = (seq: number) => {
      const c = claimed(created({ type: 't', group: { name: 'g', number: 1, total: 1 }, seq }), a, T0);
      return ok(decideFinish(c.task, a, c.claim.epoch, { kind: 'done', result: seq }, T0, BACKOFF));
    };
    const first = decideGroupProgress(undefined, finish(1_000), T0);
    const second = decideGroupProgress(undefined, finish(2_000), T0 + 1); // its record was purged, the old join not yet
    expect(second.joinOf).not.toBe(first.joinOf);
    const old = joinTask(first.join!, first.joinOf!, undefined, T0) as { task: TaskRecord };
    expect(joinTask(second.join!, second.joinOf!, undefined, T0 + 1, { ...old.task, state: 'done', finishedAt: T0 })).toMatchObject({ outcome: 'create' });
  });

  it('a parent waiting for its sub-groups’ joins is kept: not purged, not replaced by a submit, and a retry gets a join of its own', () => {
    const c = claimed(created({ type: 'recon-parent', name: 'x', rerunFinished: true }), a, T0);
    const parent = ok(decideFinish(c.task, a, c.claim.epoch, { outcome: { kind: 'done' }, subgroups: ['rs:x'] }, T0, BACKOFF));
    expect(isPurgeable(parent, T0 + 10 ** 9, 1_000, true)).toBe(false);
    expect(decideSubmit(parent, { type: 'recon-parent', name: 'x', rerunFinished: true }, T0 + 10 ** 9, 1_000).outcome).toBe('exists');
    const joined = decideParentJoin(recordSubgroupJoin(parent, 'rs:x', { state: 'done', result: 1 }), T0 + 1)!;
    expect(isPurgeable(counted(joined.parent), T0 + 10 ** 9, 1_000)).toBe(true);
    const failed = { ...counted(joined.parent), state: 'failed' as const };
    const again = claimed(decideRetry(failed, T0 + 2)!, a, T0 + 3);
    expect(again.task.subgroups).toEqual({ submitted: ['rs:x'], joined: { 'rs:x': { state: 'done', result: 1 } } });
    const rejoin = decideParentJoin(ok(decideFinish(again.task, a, again.claim.epoch, { kind: 'done' }, T0 + 4, BACKOFF)), T0 + 4)!;
    expect(rejoin.joinOf).not.toBe(joined.joinOf);
  });

  it('purges only finished tasks past their retention that nobody waits to hear of', () => {
    const task = created({ type: 't', name: 'n' });
    expect(isPurgeable(task, T0 + 10 ** 9, 1_000)).toBe(false);
    const done: TaskRecord = { ...task, state: 'done', finishedAt: T0 };
    expect(isPurgeable(done, T0 + 999, 1_000)).toBe(false);
    expect(isPurgeable(done, T0 + 1_000, 1_000)).toBe(true);
    expect(isPurgeable(done, T0, 1_000, true)).toBe(true);
    expect(isPurgeable({ ...done, uncounted: true }, T0 + 10 ** 9, 1_000, true)).toBe(false);
  });
  it('claim terms for a store that claims natively: decideClaim\'s for a task never claimed, one epoch per call even within a millisecond', () => {
    const actor: TaskActor = { instance: 'n/1', acquirer: 'n' };
    const fresh = decideSubmit(undefined, { type: 'job', name: 'x', data: null }, T0, 60_000).task;
    const first = claimTerms(actor, T0, new Map([['job', 5_000]]), 500);
    const decided = decideClaim(fresh, actor, T0, 5_000, 500);
    expect(decided.outcome === 'claimed' && decided.claim).toEqual({ instance: 'n/1', acquirer: 'n', epoch: first.epoch, claimedAt: T0, expiresAt: first.expiresAt.get('job') });
    // The next call in the same millisecond is named by an epoch of its own, so naming a lost call never names this one.
    const second = claimTerms(actor, T0, new Map([['job', 5_000]]), 500, { last: first.epoch, again: first.epoch });
    expect(second.epoch).toBe(first.epoch + 1);
    expect(second.again).toBe(first.epoch);
    expect(claimTerms(actor, T0 + 1, new Map(), 500, { last: first.epoch }).epoch).toBe((T0 + 501) * 1000);
  });
});
