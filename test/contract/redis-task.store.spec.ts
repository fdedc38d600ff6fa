import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../../lib/backends/redis/tasks/redis-task.store';
import type { TaskRecord } from '../../lib/store/tasks/task';
import { encodeTask } from '../../lib/store/tasks/task.codec';
import { claimTerms, decideClaim, decideRenew } from '../../lib/tasks/task-claim.rules';
import { compareReady } from '../../lib/store/tasks/task-store.rules';
import { placeOf } from '../../lib/store/tasks/task-rank.rules';
import { describeRankedClaimsContract, describeTaskBacklogContract, describeTaskStoreContract } from '../../lib/testing';
import { pendingAt } from '../../lib/testing/task-store-ranks.contract';
import { eventually } from '../support/eventually';
import { testRedisUrl } from '../support/test-redis';

/** Every key of one prefix (its hash tag). */
async function keysOf(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `{${prefix}}:*`, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** A claim of `task` by `instance` at `now`, as a node decides it. */
function claimOf(task: TaskRecord, instance: string, now: number, leaseMs = 60_000, acquirer = instance, skewMs = 0): TaskRecord {
  const decision = decideClaim(task, { instance, acquirer }, now, leaseMs, skewMs);
  if (decision.outcome !== 'claimed') throw new Error(`${task.id} not claimable: ${decision.outcome}`);
  return decision.task;
}

/*
 * The native task store on Redis (tasks in the record map's hash, claims found on sorted sets the write scripts keep)
 * against the test run's server: the task store contracts, two nodes with a backend each, writes asked for together,
 * what a write publishes, and what a claim query reads over a backlog.
 */
describe('RedisTaskStore against the test run\'s Redis server', () => {
  const redis = new Redis(testRedisUrl());
  const prefixes: string[] = [];
  const node = (mapPrefix: string) => new RedisTaskStore(new RedisBackend({ url: testRedisUrl(), mapPrefix, callTimeoutMs: 5_000, onLostData: () => undefined }));
  const fresh = (name: string) => {
    const prefix = `${name}-${randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    return prefix;
  };
  const drop = async (prefix: string) => {
    const keys = await keysOf(redis, prefix);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  };
  afterAll(async () => {
    for (const prefix of prefixes) await drop(prefix);
    await redis.quit();
  });

  describeTaskStoreContract('redis native', async () => {
    const mapPrefix = fresh('tc');
    return { stores: [node(mapPrefix), node(mapPrefix)], close: () => drop(mapPrefix) };
  }, { timeoutMs: 60_000 });

  describeRankedClaimsContract('redis native', async () => {
    const mapPrefix = fresh('rc');
    const stores = [node(mapPrefix), node(mapPrefix)] as const;
    // The record in the tasks hash as it is, and its index entries as the write scripts derive them from the value.
    return { stores, plant: (id, json) => stores[0].writeRaw(id, json), close: () => drop(mapPrefix) };
  }, { timeoutMs: 60_000 });

  describe('compare-and-sets asked for together', () => {
    it('go out in one script call, each landing or not on its own; a second write of one key waits for the next', async () => {
      const store = node(fresh('w'));
      await store.connect();
      try {
        const tasks = ['a', 'b', 'c', 'd', 'e'].map((name) => pendingAt('batch', name, 0, Date.now() * 1000));
        let before = store.operationCount();
        const created = await Promise.all([...tasks.map((t) => store.compareAndSet(t.id, { raw: null }, t)), store.compareAndSet(tasks[0].id, { raw: null }, tasks[0])]);
        expect(created).toEqual([true, true, true, true, true, false]);
        expect(store.operationCount() - before).toBe(2); // the five, then the second create of a
        // Claims of three as read, one against a value that changed since, two claims of one read of d, a purge of e
        // and a purge of a task that is not there (it holds: absent).
        const now = Date.now();
        const stale = { ...tasks[2], priority: 5 };
        before = store.operationCount();
        const landed = await Promise.all([
          store.compareAndSet(tasks[0].id, { raw: encodeTask(tasks[0]) }, claimOf(tasks[0], 'n/1', now)),
          store.compareAndSet(tasks[1].id, { raw: encodeTask(tasks[1]) }, claimOf(tasks[1], 'n/1', now)),
          store.compareAndSet(tasks[2].id, { raw: encodeTask(stale) }, claimOf(stale, 'n/1', now)),
          store.compareAndSet(tasks[3].id, { raw: encodeTask(tasks[3]) }, claimOf(tasks[3], 'n/1', now)),
          store.compareAndSet(tasks[3].id, { raw: encodeTask(tasks[3]) }, claimOf(tasks[3], 'n/2', now)),
          store.compareAndSet(tasks[4].id, { raw: encodeTask(tasks[4]) }, null),
          store.compareAndSet('batch:missing', { raw: null }, null),
        ]);
        expect(landed).toEqual([true, true, false, true, false, true, true]);
        expect(store.operationCount() - before).toBe(2);
        const states = await Promise.all(tasks.map(async (t) => (await store.read(t.id)).task));
        expect(states.map((t) => t && `${t.state} ${t.claim?.instance ?? '-'}`)).toEqual(['running n/1', 'running n/1', 'pending -', 'running n/1', undefined]);
        // The indexes followed: c is the one task left to claim, the three claims are the running ones.
        expect((await store.claimable(['batch'], now + 1, now, 10)).map((t) => t.name)).toEqual(['c']);
        expect((await store.claimable(['batch'], now + 1, now + 120_000, 10)).map((t) => t.name)).toEqual(['a', 'b', 'c', 'd']);
      } finally {
        await store.close();
      }
    });
  });

  describe('what a write publishes', () => {
    it('nothing on the changes channel; a task that became pending and due wakes one waiting worker on its own channel', async () => {
      const mapPrefix = fresh('pub');
      const store = node(mapPrefix);
      // Another node's feed of the tasks map: every message on the changes channel, as the feed reads it.
      const listener = new RedisBackend({ url: testRedisUrl(), mapPrefix, onWarning: () => undefined, onLostData: () => undefined });
      await listener.open();
      const heard: string[] = [];
      await (await listener.map('tasks')).watch({ changed: (k) => heard.push(k), missed: () => undefined });
      await store.connect();
      let wakes = 0;
      const stopWaiting = await store.awaitWork('w/1', () => wakes++);
      try {
        const now = Date.now();
        expect((await store.reserve(['pub'], 'w/1', { count: 1, now, lapsedBefore: now, holdMs: 60_000, waitMs: 60_000 })).tasks).toEqual([]);
        const task = pendingAt('pub', 'x', 0, now * 1000);
        expect(await store.compareAndSet(task.id, { raw: null }, task)).toBe(true);
        await eventually('the wake of the pending task', () => wakes === 1, { timeoutMs: 5_000 });
        const claimed = claimOf(task, 'n/1', now);
        expect(await store.compareAndSet(task.id, { raw: encodeTask(task) }, claimed)).toBe(true);
        const renewed = decideRenew(claimed, { instance: 'n/1', acquirer: 'n/1' }, claimed.epoch, now + 1, 60_000);
        if (renewed.outcome !== 'ok') throw new Error('not renewed');
        expect(await store.compareAndSet(task.id, { raw: encodeTask(claimed) }, renewed.task)).toBe(true);
        const { claim: _claim, ...rest } = renewed.task;
        const done: TaskRecord = { ...rest, state: 'done', finishedAt: now + 2 };
        expect(await store.compareAndSet(task.id, { raw: encodeTask(renewed.task) }, done)).toBe(true);
        expect(await store.compareAndSet(task.id, { raw: encodeTask(done) }, null)).toBe(true);
        // Waiting again: a task backing off wakes nobody yet; a last one, due, does (and everything before it was sent).
        expect((await store.reserve(['pub'], 'w/1', { count: 1, now: Date.now(), lapsedBefore: now, holdMs: 60_000, waitMs: 60_000 })).tasks).toEqual([]);
        const later: TaskRecord = { ...pendingAt('pub', 'later', 0, now * 1000), notBefore: now + 60_000 };
        expect(await store.compareAndSet(later.id, { raw: null }, later)).toBe(true);
        const last = pendingAt('pub', 'last', 0, now * 1000);
        expect(await store.compareAndSet(last.id, { raw: null }, last)).toBe(true);
        await eventually('the wake of the last task', () => wakes === 2, { timeoutMs: 5_000 });
        expect(heard).toEqual([]);
      } finally {
        await stopWaiting();
        await store.close();
        await listener.close();
      }
    });
  });

  describe('the indexes of groups and purges', () => {
    it('find uncounted tasks until counted, and a finished parent to purge only once its join was submitted', async () => {
      const store = node(fresh('g'));
      await store.connect();
      try {
        const now = Date.now();
        const finished = (name: string, extra: Partial<TaskRecord> = {}): TaskRecord => ({ ...pendingAt('g', name, 0, now * 1000), state: 'done', finishedAt: now - 10_000, ...extra });
        // Those nobody may purge yet finished first: they are not in the purge's index, so they take no place in its batch.
        const uncounted = finished('uncounted', { uncounted: true, finishedAt: now - 30_000 });
        const parent = finished('parent', { subgroups: { submitted: ['g:sub'], joined: {} }, finishedAt: now - 20_000 });
        const plain = finished('plain');
        const second = finished('uncounted2', { uncounted: true });
        for (const t of [uncounted, parent, plain, second]) expect(await store.compareAndSet(t.id, { raw: null }, t)).toBe(true);
        expect((await store.uncounted(['g'], 10)).map((t) => t.name)).toEqual(['uncounted', 'uncounted2']);
        expect((await store.finishedBefore(now, 1)).map((t) => t.name)).toEqual(['plain']);
        expect((await store.finishedBefore(now, 10)).map((t) => t.name)).toEqual(['plain']);
        const { uncounted: _u, ...counted } = uncounted;
        expect(await store.compareAndSet(uncounted.id, { raw: encodeTask(uncounted) }, counted)).toBe(true);
        const joined: TaskRecord = { ...parent, subgroups: { ...parent.subgroups!, joinSubmittedAt: now } };
        expect(await store.compareAndSet(parent.id, { raw: encodeTask(parent) }, joined)).toBe(true);
        // Counted, it leaves the index: the next batch of one is the other.
        expect((await store.uncounted(['g'], 1)).map((t) => t.name)).toEqual(['uncounted2']);
        expect((await store.finishedBefore(now, 10)).map((t) => t.name).sort()).toEqual(['parent', 'plain', 'uncounted']);
        expect((await store.finishedBefore(now, 2))).toHaveLength(2);
        expect(await store.compareAndSet(plain.id, { raw: encodeTask(plain) }, null)).toBe(true);
        expect((await store.finishedBefore(now, 10)).map((t) => t.name).sort()).toEqual(['parent', 'uncounted']);
      } finally {
        await store.close();
      }
    });
  });

  describe('the claim order index', () => {
    /** 16 hex digits that sort as `x` does: its IEEE bytes, the sign bit flipped (every bit, for a negative). */
    const sortable = (x: number) => {
      const bytes = Buffer.alloc(8);
      bytes.writeDoubleBE(x === 0 ? 0 : x);
      if (bytes[0] >= 128) for (let i = 0; i < 8; i++) bytes[i] = 255 - bytes[i];
      else bytes[0] += 128;
      return bytes.toString('hex');
    };

    it('keeps a member per pending task: its place (priority negated, then seq, 16 hex digits each) then its id', async () => {
      const mapPrefix = fresh('ix');
      const store = node(mapPrefix);
      await store.connect();
      try {
        const base = Date.now() * 1000;
        const tasks = [
          pendingAt('ix', 'high', 7, base + 5),
          pendingAt('ix', 'zero', 0, base + 1),
          pendingAt('ix', 'low', -3, base),
          pendingAt('ix', 'first', Number.MAX_SAFE_INTEGER, base + 2),
          pendingAt('ix', 'last', Number.MIN_SAFE_INTEGER, base + 3),
        ];
        expect(await Promise.all(tasks.map((t) => store.compareAndSet(t.id, { raw: null }, t)))).toEqual(tasks.map(() => true));
        const members = await redis.zrange(`{${mapPrefix}}:tp:ix`, 0, -1);
        expect(members).toEqual([...tasks].sort(compareReady).map((t) => sortable(-t.priority) + sortable(t.seq) + t.id));
      } finally {
        await store.close();
      }
    });
  });

  describe('claims made by the reserve script', () => {
    it('claims a task never claimed in the reserve call itself (one call), and leaves a retry, a fail-fast group\'s task and one not yet due to a compare-and-set', async () => {
      const mapPrefix = fresh('nc');
      const store = node(mapPrefix);
      await store.connect();
      try {
        const now = Date.now();
        const fresh1 = pendingAt('nc', 'fresh', 0, now * 1000);
        const retry: TaskRecord = { ...pendingAt('nc', 'retry', 0, now * 1000 + 1), epoch: 9, attempts: [{ attempt: 1, epoch: 9, instance: 'x', acquirer: 'x', startedAt: 1, endedAt: 2, outcome: 'retry' }] };
        const failFast: TaskRecord = { ...pendingAt('nc', 'ff', 0, now * 1000 + 2), group: { name: 'g', number: 1, failGroupFast: true } };
        const early: TaskRecord = { ...pendingAt('nc', 'early', 0, now * 1000 + 3), notBefore: now - 50 };
        for (const t of [fresh1, retry, failFast, early]) expect(await store.compareAndSet(t.id, { raw: null }, t)).toBe(true);
        const actor = { instance: 'n/1', acquirer: 'n' };
        const calls = store.operationCount();
        // `early` is due by the server's clock but not by the claimant's, 100 ms behind: held, not claimed.
        const at = now - 100;
        const got = await store.reserve(['nc'], actor.instance, { count: 10, now: at, lapsedBefore: at, holdMs: 60_000, waitMs: 60_000, claim: claimTerms(actor, at, new Map([['nc', 20_000]]), 500) });
        expect(store.operationCount() - calls).toBe(1);
        expect(got.claimed.map((t) => t.name)).toEqual(['fresh']);
        expect(got.tasks.map((t) => t.name).sort()).toEqual(['early', 'ff', 'retry']);
        expect(got.claimed[0]).toEqual(claimOf(fresh1, 'n/1', at, 20_000, 'n', 500));
        // Indexed as running until its claim's expiry, as a claim by compare-and-set is.
        expect(await redis.zscore(`{${mapPrefix}}:tr:nc`, placeOf(fresh1) + fresh1.id)).toBe(String(at + 20_000));
        expect(await redis.zrange(`{${mapPrefix}}:tp:nc`, 0, -1)).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });

  describe('writes that ride along with a reserve', () => {
    it('a completion asked for in the reserve\'s turn goes in the reserve call itself, applied first: the finish and the next claim in one round trip', async () => {
      const mapPrefix = fresh('ra');
      const store = node(mapPrefix);
      await store.connect();
      try {
        const now = Date.now();
        const first = pendingAt('ra', 'first', 0, now * 1000);
        const second = pendingAt('ra', 'second', 0, now * 1000 + 1);
        for (const t of [first, second]) expect(await store.compareAndSet(t.id, { raw: null }, t)).toBe(true);
        const actor = { instance: 'n/1', acquirer: 'n' };
        const ask = (at: number, count: number) => ({ count, now: at, lapsedBefore: at, holdMs: 60_000, waitMs: 60_000, claim: claimTerms(actor, at, new Map([['ra', 20_000]]), 500) });
        const got = await store.reserve(['ra'], actor.instance, ask(now, 1));
        expect(got.claimed.map((t) => t.name)).toEqual(['first']);
        const running = got.claimed[0];
        const done: TaskRecord = { ...running, state: 'done', finishedAt: now + 1 };
        const calls = store.operationCount();
        // Asked for in one turn: the finish, and the reserve for the slot it frees.
        const finished = store.compareAndSet(running.id, { raw: encodeTask(running) }, done);
        const stale = store.compareAndSet(second.id, { raw: 'not what is stored' }, { ...second, priority: 5 });
        const next = store.reserve(['ra'], actor.instance, ask(now + 2, 1));
        await expect(finished).resolves.toBe(true);
        await expect(stale).resolves.toBe(false);
        expect((await next).claimed.map((t) => t.name)).toEqual(['second']);
        expect(store.operationCount() - calls).toBe(1);
        expect((await store.read(running.id)).raw).toBe(encodeTask(done));
      } finally {
        await store.close();
      }
    });
  });

  describe('the index lines', () => {
    it('index a task written with its line as one planted without: through a claim, a finish and a removal, nothing is left behind', async () => {
      const mapPrefix = fresh('ln');
      const store = node(mapPrefix);
      await store.connect();
      const indexes = async () => (await keysOf(redis, mapPrefix)).filter((k) => /:t[pwrxuf](:|$)|:ix:/.test(k)).sort();
      try {
        const now = Date.now();
        const planted = pendingAt('ln', 'planted', 2, now * 1000);
        const lined = pendingAt('ln', 'lined', 1, now * 1000 + 1);
        await store.writeRaw(planted.id, encodeTask(planted)); // no line: indexed from its value
        expect(await store.compareAndSet(lined.id, { raw: null }, lined)).toBe(true);
        expect(await redis.hkeys(`{${mapPrefix}}:ix:tasks`)).toEqual([lined.id]);
        expect((await store.claimable(['ln'], now, now, 10)).map((t) => t.name)).toEqual(['planted', 'lined']);
        // Each claimed: the planted one's entries come out by its value, the lined one's by its line.
        const claimed = [planted, lined].map((t) => claimOf(t, 'a', now));
        for (const [i, t] of [planted, lined].entries()) expect(await store.compareAndSet(t.id, { raw: encodeTask(t) }, claimed[i])).toBe(true);
        expect(await redis.zcard(`{${mapPrefix}}:tp:ln`)).toBe(0);
        expect(await redis.zcard(`{${mapPrefix}}:tr:ln`)).toBe(2);
        expect(await redis.hlen(`{${mapPrefix}}:ix:tasks`)).toBe(2);
        // The lined one planted over (its line goes), both finished, then removed: no entry, no line.
        const done = claimed.map((t): TaskRecord => ({ ...t, state: 'done', finishedAt: now - 1 }));
        await store.writeRaw(lined.id, encodeTask(done[1]));
        expect(await redis.hkeys(`{${mapPrefix}}:ix:tasks`)).toEqual([planted.id]);
        expect(await store.compareAndSet(planted.id, { raw: encodeTask(claimed[0]) }, done[0])).toBe(true);
        expect((await store.finishedBefore(now, 10)).map((t) => t.name).sort()).toEqual(['lined', 'planted']);
        expect(await store.compareAndSet(planted.id, { raw: encodeTask(done[0]) }, null)).toBe(true);
        await store.writeRaw(lined.id, null);
        expect(await indexes()).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('trust no line left beside a value another write replaced without one: the value is read instead', async () => {
      const mapPrefix = fresh('ls');
      const store = node(mapPrefix);
      await store.connect();
      try {
        const now = Date.now();
        const task = pendingAt('ls', 'stale', 0, now * 1000);
        expect(await store.compareAndSet(task.id, { raw: null }, task)).toBe(true);
        // A write that keeps no lines (an older version's script) claims it: the value and the indexes change, the
        // line beside it stays the pending one.
        const claimed = claimOf(task, 'old', now);
        const member = placeOf(task) + task.id;
        await redis.hset(`{${mapPrefix}}:m:tasks`, task.id, encodeTask(claimed));
        await redis.zrem(`{${mapPrefix}}:tp:ls`, member);
        await redis.zadd(`{${mapPrefix}}:tr:ls`, claimed.claim!.expiresAt, member);
        // This version finishes it: the running entry comes out by the value, not by the stale line.
        const done: TaskRecord = { ...claimed, state: 'done', finishedAt: now - 1 };
        expect(await store.compareAndSet(task.id, { raw: encodeTask(claimed) }, done)).toBe(true);
        expect(await redis.zcard(`{${mapPrefix}}:tr:ls`)).toBe(0);
        expect((await store.finishedBefore(now, 10)).map((t) => t.name)).toEqual(['stale']);
      } finally {
        await store.close();
      }
    });
  });

  describeTaskBacklogContract('redis native', async () => {
    const mapPrefix = fresh('b');
    const store = node(mapPrefix);
    return {
      store,
      // The batch, read off the index in claim order: the tasks backing off are not even stepped over; once they come
      // due, the first query moves them into claim order (once).
      reads: { last: () => store.lastClaimQueryExamined, bound: ({ batch, newlyDue }) => batch + newlyDue },
      close: () => drop(mapPrefix),
    };
  });
});
