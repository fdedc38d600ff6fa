import Redis, { Cluster } from 'ioredis';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { RedisLostData } from '../../lib/backends/redis/redis-backend.options';
import { eventually } from '../support/eventually';
import { ControlledRedis } from '../support/redis-control';
import { TestRedisCluster, TestRedisSentinel } from '../support/redis-topology';
import { uniquePrefix } from '../support/test-cluster';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

/**
 * The Redis backend on the topologies teams run: a primary with a replica behind Sentinel (a failover the backend
 * follows, counted as the loss it may be), and a Redis Cluster (every key of a prefix in one slot, changes heard
 * across the nodes), each on real servers started here.
 */
describe('Redis behind Sentinel', () => {
  let primary: ControlledRedis;
  let replica: ControlledRedis;
  let sentinel: TestRedisSentinel;
  const closing: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    primary = await ControlledRedis.start();
    replica = await ControlledRedis.startReplica(primary);
    sentinel = await TestRedisSentinel.start(primary.port);
  });
  afterAll(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
    await sentinel?.stop();
    await replica?.stop();
    await primary?.stop();
  });

  it('follows a failover to the promoted replica: the data it had is there, the failover is a loss, counters go on above it', async () => {
    const mapPrefix = uniquePrefix('redis-sentinel');
    const connection = { sentinels: [sentinel.address], name: sentinel.name };
    expect(await new RedisBackend({ connection, mapPrefix }).declareFresh()).toBe(true);
    const losses: RedisLostData[] = [];
    const backend = new RedisBackend({ connection, mapPrefix, onWarning: () => undefined, onLostData: (lost) => losses.push(lost), callTimeoutMs: 2_000 });
    await backend.open();
    closing.push(() => backend.close());
    const things = await backend.map('things');
    const counters = await backend.counters();
    expect(await things.create('before', 'v1')).toBe(true);
    const token = (await counters.next('tokens')).value;
    await eventually('the replica to have the write', () => replica.withClient(async (c) => (await c.hget(`{${mapPrefix}}:m:things`, 'before')) === 'v1'), { timeoutMs: 10_000 });

    const promoted = await sentinel.failover();
    expect(promoted).toBe(replica.port);
    // Until the Sentinel turns the old primary into a replica (and drops its clients), both are primaries and the
    // backend still writes to the old one: writes the demotion then throws away. The next call on the new primary
    // finds the state written under the old one's replication id: a loss, told once.
    await eventually('the old primary to be a replica', () => primary.withClient(async (c) => /role:slave/.test(await c.info('replication'))), { timeoutMs: 30_000, intervalMs: 100 });
    await eventually('a write to land on the new primary', async () => {
      try {
        return await things.create('after', 'v2');
      } catch {
        return false;
      }
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(await replica.withClient((c) => c.hget(`{${mapPrefix}}:m:things`, 'after'))).toBe('v2');
    expect(await things.get('before')).toEqual({ key: 'before', value: 'v1' });
    const next = (await counters.next('tokens')).value;
    process.stdout.write(`redis sentinel failover: primary ${primary.port} → ${promoted}; losses told ${losses.length}; token ${token} → ${next}\n`);
    // A promoted replica may have missed acknowledged writes: the backend cannot tell, so it is a loss (one report).
    expect(losses.map((l) => l.cause)).toEqual(['failed-over']);
    expect(next).toBeGreaterThan(token);
    expect(next).toBeGreaterThanOrEqual(losses[0].lostAt * 1000);
  });
});

describe('Redis Cluster', () => {
  let cluster: TestRedisCluster;
  const closing: Array<() => Promise<unknown> | void> = [];
  beforeAll(async () => {
    cluster = await TestRedisCluster.start(3);
  });
  afterAll(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
    await cluster?.stop();
  });

  const appCluster = () => {
    const client = new Cluster(cluster.startupNodes, { lazyConnect: true });
    client.on('error', () => undefined);
    closing.push(() => client.disconnect());
    return client;
  };

  it('runs every call in the prefix\'s slot, and a change written on one node is heard by another', async () => {
    const mapPrefix = uniquePrefix('redis-cluster');
    const [a, b] = [appCluster(), appCluster()];
    expect(await new RedisBackend({ client: a, mapPrefix }).declareFresh()).toBe(true);
    const [writer, listener] = [a, b].map((client) => new RedisBackend({ client, mapPrefix, onWarning: () => undefined }));
    for (const backend of [writer, listener]) {
      await backend.open();
      closing.push(() => backend.close());
    }
    const heard: Array<[string, string | null]> = [];
    await (await listener.map('things')).watch({ changed: (key, value) => heard.push([key, value]), missed: () => undefined });
    const things = await writer.map('things');
    expect(await things.create('k', 'v1')).toBe(true);
    expect(await things.replace({ key: 'k', value: 'v1' }, 'v2')).toBe(true);
    expect(await things.replace({ key: 'k', value: 'v1' }, 'v3')).toBe(false);
    const counters = await writer.counters();
    const [first, second] = [(await counters.next('tokens')).value, (await counters.next('tokens')).value];
    expect(second).toBeGreaterThan(first);
    await eventually('the listener on another connection to hear both writes', () => heard.length >= 2, { timeoutMs: 10_000 });
    expect(heard).toEqual([['k', 'v1'], ['k', 'v2']]);
    // Every key of the prefix is in the one slot its hash tag names.
    const slots = await new Redis(cluster.startupNodes[0]).call('CLUSTER', 'KEYSLOT', `{${mapPrefix}}:m:things`);
    const keys = (await Promise.all(cluster.startupNodes.map(async (node) => {
      const client = new Redis(node);
      try {
        return (await client.keys(`{${mapPrefix}}:*`)).length;
      } finally {
        client.disconnect();
      }
    })));
    process.stdout.write(`redis cluster: slot ${String(slots)}; keys of the prefix per node ${keys.join('/')}\n`);
    expect(keys.filter((n) => n > 0)).toHaveLength(1);
  });

  it('refuses minReplicas on a Cluster client, naming the option', () => {
    expect(() => new RedisBackend({ client: appCluster(), minReplicas: 1 })).toThrow(InvalidInputError);
    expect(() => new RedisBackend({ client: appCluster(), minReplicas: 1 })).toThrow(/redis\.minReplicas/);
  });
});
