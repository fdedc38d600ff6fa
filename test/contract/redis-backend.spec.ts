import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { RedisLostData } from '../../lib/backends/redis/redis-backend.options';
import { describeRedisLostData, isRestartWithoutKnownLoss } from '../../lib/backends/redis/redis-incarnation';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import { describeStoreContracts } from '../../lib/testing';
import { eventually } from '../support/eventually';
import { ControlledRedis } from '../support/redis-control';
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

describe('against the test run\'s Redis server', () => {
  const redis = new Redis(testRedisUrl());
  afterAll(async () => {
    await redis.quit();
  });

  // The primitives and every capability store over them, two nodes each with a client of its own, each test under a
  // prefix of its own (a loss of data is a whole prefix's: its keys are one hash tag).
  describeStoreContracts('redis', async () => {
    const mapPrefix = `contract-${randomUUID().slice(0, 8)}`;
    const node = () => new RedisBackend({ url: testRedisUrl(), mapPrefix, callTimeoutMs: 5_000, onLostData: () => undefined });
    // A prefix of the test's own, new: declared so, as a new deployment would be (else its first use is a loss).
    await node().declareFresh();
    return {
      backends: [node(), node()],
      // What a restart without persistence looks like to the backend: every key of the prefix gone.
      async loseData() {
        const keys = await keysOf(redis, mapPrefix);
        if (keys.length > 0) await redis.del(...keys);
      },
      async close() {
        const keys = await keysOf(redis, mapPrefix);
        if (keys.length > 0) await redis.del(...keys);
      },
    };
  }, { timeoutMs: 120_000 });

  it('drops the expired records of every map in one sweep, telling each removal, and keeps the live ones', async () => {
    const mapPrefix = `sweep-${randomUUID().slice(0, 8)}`;
    const backend = new RedisBackend({ url: testRedisUrl(), mapPrefix, onWarning: () => undefined });
    await backend.declareFresh();
    await backend.open();
    try {
      const maps = await Promise.all(['presence', 'leases', 'other'].map((name) => backend.map(name)));
      const heard: string[] = [];
      for (const map of maps) await map.watch({ changed: (key, value) => value === null && heard.push(`${map.name}/${key}`), missed: () => undefined });
      for (const map of maps) {
        await map.put('gone', '{"v":1}', { ttlMs: 1 });
        await map.put('kept', '{"v":2}', { ttlMs: 60_000 });
      }
      // Past their time-to-live, reads already treat them as absent; one sweep drops them from every map at once.
      await eventually('the records expired', async () => (await Promise.all(maps.map((map) => map.get('gone')))).every((r) => r === undefined));
      expect(await backend.sweepExpired()).toBe(3);
      await eventually('each removal told', () => heard.length === 3);
      expect(heard.sort()).toEqual(['leases/gone', 'other/gone', 'presence/gone']);
      for (const map of maps) expect((await map.list()).map((r) => r.key)).toEqual(['kept']);
      expect(await redis.zrange(`{${mapPrefix}}:ttl:presence`, 0, -1)).toEqual(['kept']);
      expect(await backend.sweepExpired()).toBe(0);
    } finally {
      await backend.close();
    }
  });

  it('says a call it could not send because the connection is down in plain words naming the server, not ioredis\'s', async () => {
    const server = await ControlledRedis.start();
    const backend = new RedisBackend({ url: server.url, mapPrefix: `down-${randomUUID().slice(0, 8)}`, onWarning: () => undefined });
    try {
      await backend.declareFresh();
      await backend.open();
      const map = await backend.map('things');
      await server.kill();
      const address = server.url.replace(/\/$/, '');
      const said: Error[] = [];
      await eventually('a call refused while the connection is down', async () => {
        const error = await map.get('one').then(() => undefined, (e: Error) => e);
        if (error) said.push(error);
        return error && /not connected/.test(error.message) ? error : undefined;
      }, { timeoutMs: 10_000, intervalMs: 50 });
      expect(said.at(-1)).toMatchObject({ name: 'StoreUnavailableError', message: `Redis call failed (read things "one"): not connected to Redis at ${address} (the connection is down; reconnecting), not sent` });
      for (const error of said) {
        expect(error.message).toContain(address);
        expect(error.message).not.toMatch(/enableOfflineQueue|Stream isn't writeable|Connection is closed/);
      }
    } finally {
      await backend.close().catch(() => undefined);
      await server.stop().catch(() => undefined);
    }
  });

  describe('a Redis that keeps nothing on disk', () => {
    it('is told once at open; one with its AOF is not', async () => {
      const bare = await ControlledRedis.start({ appendonly: false });
      try {
        const warnings: string[] = [];
        const mapPrefix = `warn-${randomUUID().slice(0, 8)}`;
        const opened = [
          new RedisBackend({ url: bare.url, mapPrefix, onWarning: (m) => warnings.push(`bare ${m}`) }),
          new RedisBackend({ url: testRedisUrl(), mapPrefix, onWarning: (m) => warnings.push(`aof ${m}`) }),
        ];
        for (const backend of opened) {
          await backend.declareFresh();
          await backend.open();
        }
        await eventually('the warning', () => warnings.length > 0);
        await opened[1].now(); // answered after its CONFIG GET on the same connection: its warning, if any, is out
        await Promise.all(opened.map((backend) => backend.close()));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/^bare Redis keeps no append-only file \(appendonly no\): a restart of it loses every permit/);
      } finally {
        await bare.stop();
      }
    });
  });

  describe('minReplicas', () => {
    it('counts a write done once a replica has it, and fails one no replica acknowledged in time, closed', async () => {
      const primary = await ControlledRedis.start();
      const replica = await ControlledRedis.startReplica(primary);
      const mapPrefix = `replicas-${randomUUID().slice(0, 8)}`;
      const backend = new RedisBackend({ url: primary.url, mapPrefix, minReplicas: 1, callTimeoutMs: 1_500, onWarning: () => undefined });
      try {
        await backend.declareFresh();
        await backend.open();
        const map = await backend.map('semaphores');
        expect(await map.create('billing', 'held@1')).toBe(true);
        expect(await replica.withClient((client) => client.hget(`{${mapPrefix}}:m:semaphores`, 'billing'))).toBe('held@1');
        // Reads wait for nothing; a write no replica can acknowledge fails within its deadline.
        await replica.freeze();
        expect((await map.get('billing'))?.value).toBe('held@1');
        const failed = await map.replace({ key: 'billing', value: 'held@1' }, 'held@2').then(() => undefined, (error: unknown) => error);
        expect(failed).toBeInstanceOf(StoreUnavailableError);
        expect((failed as Error).message).toMatch(/reached 0 of the 1 replicas minReplicas asks for/);
        await replica.resume();
      } finally {
        await backend.close();
        await replica.stop();
        await primary.stop();
      }
    });

    it('refuses a count that is not one, naming the option', () => {
      expect(() => new RedisBackend({ url: testRedisUrl(), minReplicas: 1.5 })).toThrow(/invalid redis\.minReplicas: must be a whole number of replicas/);
    });
  });

  describe('a store that comes back without its last writes (a replica promoted before it had them)', () => {
    it('is found by the next call of a node that saw more: the leases are dropped and marked lost, counters jump, watchers are told', async () => {
      const mapPrefix = `restore-${randomUUID().slice(0, 8)}`;
      const reports: RedisLostData[] = [];
      const node = () => new RedisBackend({ url: testRedisUrl(), mapPrefix, listenCheckMs: 60_000, onLostData: (r) => reports.push(r) });
      const [a, b] = [node(), node()];
      expect(await a.declareFresh()).toBe(true);
      await a.open();
      await b.open();
      try {
        const [ma, mb] = [await a.map('semaphores', { forgetOnRestore: true }), await b.map('semaphores', { forgetOnRestore: true })];
        const [other] = [await a.map('schedules')];
        const [ca, cb] = [await a.counters(), await b.counters()];
        const missed: string[] = [];
        await mb.watch({ changed: () => undefined, missed: (reason) => missed.push(reason) });
        expect(await ma.create('billing', 'free@1')).toBe(true);
        expect(await other.create('nightly', 'kept@1')).toBe(true);
        await ca.next('token');
        // The replica's copy: every key as it is now.
        const keys = await keysOf(redis, mapPrefix);
        const copy = await Promise.all(keys.map(async (key) => [key, await redis.dumpBuffer(key)] as const));

        // Acknowledged to a after the copy: the promoted replica never had them.
        expect(await ma.replace({ key: 'billing', value: 'free@1' }, 'held-by-a@2')).toBe(true);
        const handedOut = (await ca.next('token')).value;
        expect((await mb.get('billing'))?.value).toBe('held-by-a@2'); // b saw them too
        for (const key of await keysOf(redis, mapPrefix)) await redis.del(key);
        for (const [key, dump] of copy) if (dump) await redis.restore(key, 0, dump, 'REPLACE');

        // b's next call finds it: the lease is not served as restored, and b's compare-and-set against it fails.
        expect(await mb.get('billing')).toBeUndefined();
        expect(await mb.replace({ key: 'billing', value: 'free@1' }, 'held-by-b@2')).toBe(false);
        const since = await mb.lostSince('billing');
        expect(since).toBeDefined();
        expect(await mb.lostValue!('billing')).toBe('free@1');
        expect(missed).toContain('lost-data');
        expect(reports.map((r) => r.forgotten)).toEqual([['semaphores billing']]);
        // b had seen writes the store came back without: a true loss, told as one (never as a restart that kept them).
        expect(reports.map((r) => [r.cause, r.keptEveryWriteSeen, isRestartWithoutKnownLoss(r)])).toEqual([['behind', false, false]]);
        expect(describeRedisLostData(reports[0])).toContain('may be lost');
        // A map that is not a lease is kept as it came back.
        expect((await other.get('nightly'))?.value).toBe('kept@1');
        const after = await cb.next('token');
        expect(after.value).toBeGreaterThan(handedOut);
        expect(after.lostSince).toBe(since);
      } finally {
        await Promise.all([a.close(), b.close()]);
        const keys = await keysOf(redis, mapPrefix);
        if (keys.length > 0) await redis.del(...keys);
      }
    });
  });
});
