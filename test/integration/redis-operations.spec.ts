import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type Redis from 'ioredis';
import { ClusterSingleton, GatekeeperModule, RedisBackend } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { ControlledRedis } from '../support/redis-control';
import { uniquePrefix } from '../support/test-cluster';

/** A short permit, more than twice the skew bound, so a recovery wait (permit + twice the skew) is a few seconds. */
const DURATION_MS = 3_000;
const SKEW_MS = 1_000;

@Injectable()
class OpsJobs {
  runs = 0;

  @ClusterSingleton('ops-report', '3s')
  async report(): Promise<string | undefined> {
    this.runs++;
    return 'reported';
  }
}

/** How many `CONFIG GET`s the server has run: a check of the eviction policy that said nothing still counts one. */
async function configGets(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/^cmdstat_config\|get:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

/** Drops every plain connection but the caller's (the node's call connection; its subscriber stays): it reconnects. */
async function dropCallConnections(redis: Redis): Promise<void> {
  await redis.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
}

/**
 * What the Redis backend says about the server it runs on, as an operator reads it in the log: an eviction policy that
 * can delete the library's keys, a loss named by its true cause, and a recovery wait said once, with its end.
 */
describe('Redis operations in the log', () => {
  let server: ControlledRedis;
  let admin: Redis;
  const apps: TestingModule[] = [];

  beforeAll(async () => {
    server = await ControlledRedis.start();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    admin?.disconnect();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** A plain client of the server, for the operator's commands; reconnects after a restart. */
  async function operator(): Promise<Redis> {
    const { default: IORedis } = await import('ioredis');
    admin = new IORedis(server.url, { maxRetriesPerRequest: 1 });
    await admin.call('CONFIG', 'SET', 'maxmemory', '0', 'maxmemory-policy', 'noeviction');
    return admin;
  }

  async function node(logger: CapturingLogger, mapPrefix: string, url = server.url): Promise<TestingModule> {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend: 'redis',
        redis: { url, mapPrefix },
        identity: { acquirer: 'ops-node' },
        maxClockSkew: `${SKEW_MS}ms`,
      })],
      providers: [OpsJobs],
    }).setLogger(logger).compile();
    apps.push(app);
    await app.init();
    return app;
  }

  const evictionErrors = (logger: CapturingLogger) => logger.find('error', 'Redis may evict the library\'s keys');

  it('an evicting policy at start is one ERROR naming it, what it costs and the fix', async () => {
    const redis = await operator();
    await redis.call('CONFIG', 'SET', 'maxmemory', '64mb', 'maxmemory-policy', 'allkeys-lru');
    const logger = new CapturingLogger();
    await node(logger, uniquePrefix('ops-evict'));

    const [error] = await eventually('the ERROR about eviction', () => evictionErrors(logger).length > 0 && evictionErrors(logger));
    expect(evictionErrors(logger)).toHaveLength(1);
    expect(error).toContain('maxmemory-policy is allkeys-lru (maxmemory 67108864 bytes)');
    expect(error).toContain('runs are repeated or held back');
    expect(error).toContain('Set maxmemory-policy noeviction');
    expect(error).toContain('volatile-lru, volatile-lfu, volatile-random, volatile-ttl');
  });

  it('a policy changed while running is said on the next reconnect, once per change; noeviction says nothing', async () => {
    const redis = await operator();
    const logger = new CapturingLogger();
    const before = await configGets(redis);
    await node(logger, uniquePrefix('ops-evict-live'));
    // The checks at start ran (the server counted their CONFIG GETs: appendonly, maxmemory*) and said nothing of noeviction.
    await eventually('the checks at start', async () => (await configGets(redis)) >= before + 2);
    expect(evictionErrors(logger)).toEqual([]);
    expect(logger.find('warn', 'maxmemory-policy')).toEqual([]);

    await redis.call('CONFIG', 'SET', 'maxmemory', '64mb', 'maxmemory-policy', 'allkeys-lru');
    const dropped = Date.now();
    await dropCallConnections(redis);
    await eventually('the ERROR after the reconnect', () => evictionErrors(logger).length === 1, { timeoutMs: 15_000 });
    process.stdout.write(`redis policy set to allkeys-lru while running: the ERROR ${Date.now() - dropped} ms after the connection was dropped\n`);
    expect(evictionErrors(logger)[0]).toContain('maxmemory-policy is allkeys-lru');

    // Unchanged: a reconnect checks again (one more CONFIG GET) and says nothing new.
    const checked = await configGets(redis);
    await dropCallConnections(redis);
    await eventually('the check after a second reconnect', async () => (await configGets(redis)) > checked, { timeoutMs: 15_000 });
    // Another evicting policy is a change: said again.
    await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lfu');
    await dropCallConnections(redis);
    await eventually('the ERROR naming the new policy', () => evictionErrors(logger).length === 2, { timeoutMs: 15_000 });
    expect(evictionErrors(logger)[1]).toContain('maxmemory-policy is allkeys-lfu');
    // A policy that evicts only keys with a TTL (the library sets none) is safe: nothing more is said.
    await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru');
    const safe = await configGets(redis);
    await dropCallConnections(redis);
    await eventually('the check of volatile-lru', async () => (await configGets(redis)) > safe, { timeoutMs: 15_000 });
    expect(evictionErrors(logger)).toHaveLength(2);
    expect(logger.find('warn', 'maxmemory-policy')).toEqual([]);
  });

  it('where CONFIG is refused (a managed Redis), the policy is read from INFO memory', async () => {
    const redis = await operator();
    await redis.call('ACL', 'SETUSER', 'app', 'on', '>app-secret', '~*', '&*', '+@all', '-config');
    await redis.call('CONFIG', 'SET', 'maxmemory', '64mb', 'maxmemory-policy', 'allkeys-random');
    const logger = new CapturingLogger();
    await node(logger, uniquePrefix('ops-evict-acl'), server.url.replace('redis://', 'redis://app:app-secret@'));

    await eventually('the ERROR about eviction', () => evictionErrors(logger).length > 0);
    expect(evictionErrors(logger)).toHaveLength(1);
    expect(evictionErrors(logger)[0]).toContain('maxmemory-policy is allkeys-random');
    expect(logger.find('warn', 'Could not check')).toEqual([]);
  });

  it('a plain restart of Redis with its AOF: a WARN names a restart that kept every write seen, the wait is unchanged, one line says until when', async () => {
    await operator();
    const mapPrefix = uniquePrefix('ops-restart');
    expect(await new RedisBackend({ url: server.url, mapPrefix }).declareFresh()).toBe(true);
    const logger = new CapturingLogger();
    const app = await node(logger, mapPrefix);
    const jobs = app.get(OpsJobs);
    // The scheduler's ticks, by hand: every 100 ms, as a job ticking often would.
    let ticking = true;
    const ticks = (async () => {
      while (ticking) {
        await jobs.report().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await eventually('the job to run', () => jobs.runs > 0);
      await server.shutdown();
      const restartedAt = Date.now();
      await server.restart();
      const ranBefore = jobs.runs;
      const ranAgainAt = await eventually('the job to run again after the recovery wait', () => jobs.runs > ranBefore && Date.now(), { timeoutMs: 30_000, intervalMs: 50 });
      process.stdout.write(`redis restarted with its AOF: the job ran again ${ranAgainAt - restartedAt} ms after the restart (permit ${DURATION_MS} ms, skew bound ${SKEW_MS} ms)\n`);
      expect(ranAgainAt - restartedAt).toBeGreaterThanOrEqual(DURATION_MS);
    } finally {
      ticking = false;
      await ticks;
    }

    // Nothing this node saw was lost (a clean SHUTDOWN): a restart, said once as a WARN, never an ERROR; the wait is the
    // same as after a loss (above), since writes another node saw later cannot be checked from here.
    expect(logger.find('error', 'Redis (keys')).toEqual([]);
    const restarts = logger.find('warn', 'Redis (keys');
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toContain('restarted: it runs as another process (run_id)');
    expect(restarts[0]).toContain('came back with every write this node had seen');
    expect(restarts[0]).toMatch(/Permits forgotten, granted again only after a recovery wait: .*ops-report/);
    expect(restarts[0]).not.toMatch(/promoted|failover|may be lost/);
    const recovering = logger.find('warn', 'RECOVERING');
    expect(recovering).toHaveLength(1);
    expect(recovering[0]).toMatch(/"ops-report" waits until \S+: the Redis store may have lost its data/);
    expect(recovering[0]).toContain('the library\'s own recovery wait');
    // A command named to a Redis team is the Redis one, never Hazelcast's bare `store init`.
    expect(logger.entries.filter((e) => e.message.includes('store init') && !e.message.includes('--backend redis store init'))).toEqual([]);
    // The wait outlasted the permit's duration, after which a job nobody holds is warned about: not for this wait.
    expect(logger.find('warn', 'no holder')).toEqual([]);
  });
});
