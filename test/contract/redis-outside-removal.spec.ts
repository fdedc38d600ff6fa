import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { RecordMap } from '../../lib/store/record-map';
import { eventually } from '../support/eventually';
import { testRedisUrl } from '../support/test-redis';

/** How often each node's feed checks itself, here: the latest a removal nobody else calls about is found. */
const LISTEN_CHECK_MS = 300;

/**
 * Keys of a map of leases (`forgetOnRestore`) removed by another client, one backend at a time on the test run's Redis:
 * found by the next script of any node, or by the feed's own check when nothing else calls, marked lost (so `lostSince`
 * answers) and told removed to every watcher; nothing else is marked, and the library's own removals are not taken
 * for outside ones.
 */
describe('Redis: records of a map of leases removed by another client', () => {
  const redis = new Redis(testRedisUrl());
  const backends: RedisBackend[] = [];
  afterAll(async () => {
    await Promise.all(backends.map((b) => b.close()));
    await redis.quit();
  });

  async function open(): Promise<{ map: RecordMap; prefix: string; heard: Array<[string, string | null]> }> {
    const prefix = `removal-${randomUUID().slice(0, 8)}`;
    const backend = new RedisBackend({ url: testRedisUrl(), mapPrefix: prefix, listenCheckMs: LISTEN_CHECK_MS, onWarning: () => undefined });
    expect(await backend.declareFresh()).toBe(true);
    backends.push(backend);
    await backend.open();
    const map = await backend.map('leases', { forgetOnRestore: true });
    const heard: Array<[string, string | null]> = [];
    await map.watch({ changed: (key, value) => heard.push([key, value]), missed: () => undefined });
    return { map, prefix, heard };
  }

  it('an HDEL of one record, with no call after it: found by the feed\'s check, that record alone marked lost and told removed', async () => {
    const { map, prefix, heard } = await open();
    for (const key of ['a', 'b', 'c']) expect(await map.create(key, `{"v":"${key}"}`)).toBe(true);
    const removed = Date.now();
    expect(await redis.hdel(`{${prefix}}:m:leases`, 'b')).toBe(1);
    // Nothing of the test calls the store: only the feed's check of itself, from a script.
    const told = await eventually('the removal to be told', () => heard.find(([key, value]) => key === 'b' && value === null), { timeoutMs: 10 * LISTEN_CHECK_MS, intervalMs: 10 });
    expect(told).toBeDefined();
    const lostSince = await map.lostSince('b');
    process.stdout.write(`redis HDEL of one lease: told removed ${Date.now() - removed} ms after (feed check every ${LISTEN_CHECK_MS} ms), lost since +${lostSince! - removed} ms\n`);
    expect(lostSince).toBeGreaterThanOrEqual(removed - 1_000);
    expect(await map.lostSince('a')).toBeUndefined();
    expect(await map.lostSince('never')).toBeUndefined();
    expect((await map.list()).map((r) => r.key).sort()).toEqual(['a', 'c']);
  });

  it('a DEL of the whole hash: every record in it marked lost and told removed', async () => {
    const { map, prefix, heard } = await open();
    for (const key of ['a', 'b']) expect(await map.create(key, `{"v":"${key}"}`)).toBe(true);
    await redis.del(`{${prefix}}:m:leases`);
    // The next call of any node finds it, before its own body runs.
    expect(await map.get('a')).toBeUndefined();
    expect(await map.lostSince('a')).toBeDefined();
    expect(await map.lostSince('b')).toBeDefined();
    await eventually('both removals told', () => ['a', 'b'].every((k) => heard.some(([key, value]) => key === k && value === null)), { timeoutMs: 5_000, intervalMs: 10 });
  });

  it('the library\'s own removals and records written from outside are not losses', async () => {
    const { map, prefix } = await open();
    expect(await map.create('a', '{"v":1}')).toBe(true);
    expect(await map.create('b', '{"v":2}')).toBe(true);
    expect(await map.remove({ key: 'a', value: '{"v":1}' })).toBe(true);
    await map.delete('b');
    await redis.hset(`{${prefix}}:m:leases`, 'c', '{"v":3}');
    expect(await map.get('c')).toEqual({ key: 'c', value: '{"v":3}' });
    for (const key of ['a', 'b', 'c']) expect(await map.lostSince(key)).toBeUndefined();
  });
});
