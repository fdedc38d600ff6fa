import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { eventually } from '../support/eventually';
import { ControlledRedis } from '../support/redis-control';
import { testRedisUrl } from '../support/test-redis';

// The Redis test infrastructure itself: the run's server (test/setup/global-setup.mjs) and a server of a test's own
// (scripts/redis.mjs through ControlledRedis), whose data outlives a SIGKILL with an AOF and not without one.

/** A connected plain client that fails a command at once while the server is away, rather than queueing it. */
async function client(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => 50, disconnectTimeout: 50 });
  await redis.connect();
  return redis;
}

/** Polls `redis` until it answers GET `key` again (after a restart), and returns the value. */
function getOnceBack(redis: Redis, key: string): Promise<string | null> {
  return eventually(`GET ${key} answered`, async () => {
    try {
      return { value: await redis.get(key) };
    } catch {
      return undefined;
    }
  }).then(({ value }) => value);
}

describe('the test run\'s Redis server', () => {
  it('answers SET and GET at testRedisUrl()', async () => {
    const redis = new Redis(testRedisUrl());
    try {
      const key = `redis-server-spec:${randomUUID()}`;
      expect(await redis.set(key, 'hello', 'PX', 60_000)).toBe('OK');
      expect(await redis.get(key)).toBe('hello');
      await redis.del(key);
    } finally {
      await redis.quit();
    }
  });
});

describe('a ControlledRedis', () => {
  let server: ControlledRedis | undefined;
  let replica: ControlledRedis | undefined;
  const clients: Redis[] = [];
  const connect = async (url: string) => {
    const redis = await client(url);
    clients.push(redis);
    return redis;
  };

  afterEach(async () => {
    for (const redis of clients.splice(0)) redis.disconnect();
    await replica?.stop();
    await server?.stop();
    replica = server = undefined;
  });

  it('with appendonly (the default) keeps an acknowledged write across a SIGKILL and a restart on the same port', async () => {
    server = await ControlledRedis.start();
    const redis = await connect(server.url);
    expect(await redis.set('survivor', 'still here')).toBe('OK');

    await server.kill();
    await eventually('the killed server refuses commands', async () => {
      try {
        await redis.ping();
        return false;
      } catch {
        return true;
      }
    });
    await server.restart();

    expect(await getOnceBack(redis, 'survivor')).toBe('still here');
  });

  it('without appendonly loses everything on a SIGKILL', async () => {
    server = await ControlledRedis.start({ appendonly: false });
    const redis = await connect(server.url);
    expect(await redis.set('doomed', 'gone soon')).toBe('OK');

    await server.kill();
    await server.restart();

    expect(await getOnceBack(redis, 'doomed')).toBeNull();
  });

  it('freezes (a command gets no answer, the connection held) and resumes', async () => {
    server = await ControlledRedis.start();
    const redis = await connect(server.url);
    await redis.set('k', 'v');
    const impatient = new Redis(server.url, { commandTimeout: 300, maxRetriesPerRequest: 0, disconnectTimeout: 50 });
    clients.push(impatient);
    expect(await impatient.get('k')).toBe('v');

    await server.freeze();
    await expect(impatient.get('k')).rejects.toThrow(/timed out/i);

    await server.resume();
    expect(await redis.get('k')).toBe('v');
  });

  it('starts a replica that follows the primary, and promotes it', async () => {
    server = await ControlledRedis.start();
    const primary = await connect(server.url);
    await primary.set('before', '1');
    replica = await ControlledRedis.startReplica(server);
    const follower = await connect(replica.url);
    expect(replica.port).not.toBe(server.port);

    await primary.set('after', '2');
    await eventually('the replica has the write', async () => (await follower.get('after')) === '2');
    expect(await follower.get('before')).toBe('1');
    await expect(follower.set('x', 'y')).rejects.toThrow(/READONLY/);

    await server.kill();
    await replica.promote();
    expect(await follower.set('x', 'y')).toBe('OK');
    // Still a primary after a restart (CONFIG REWRITE), with its data.
    await replica.shutdown();
    await replica.restart();
    await eventually('the promoted replica is back', async () => {
      try {
        return (await follower.get('x')) === 'y';
      } catch {
        return false;
      }
    });
    expect(await follower.info('replication')).toMatch(/role:master/);
  });
});
