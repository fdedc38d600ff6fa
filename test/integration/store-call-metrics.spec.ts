import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { Registry } from 'prom-client';
import { GatekeeperModule, GatekeeperService, RedisBackend, TaskService, type GatekeeperModuleOptions } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/** The `gatekeeper_store_call_duration_seconds` series of one scrape, as `labels -> count`. */
function callCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^gatekeeper_store_call_duration_seconds_count\{(.*)\} (\d+)$/.exec(line);
    if (match) counts.set(match[1], Number(match[2]));
  }
  return counts;
}

function count(counts: Map<string, number>, labels: string): number {
  return counts.get(labels) ?? 0;
}

/**
 * Store calls are measured alike on every backend, above them: a module on PostgreSQL and one on Redis (real
 * servers) report `store_call_duration_seconds` by capability and outcome, and a call that fails is counted with how
 * it ended.
 */
describe('store-call metrics on PostgreSQL and Redis', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function start(node: string, options: GatekeeperModuleOptions) {
    const registry = new Registry();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        ...options,
        identity: { acquirer: node },
        membership: false,
        metrics: { registry },
        definitions: [{ name: 'calls-report', duration: '30s' }, { name: 'calls-later', duration: '30s' }],
      })],
    }).setLogger(new CapturingLogger()).compile();
    closing.push(() => app.close());
    await app.init();
    return { service: app.get(GatekeeperService), tasks: app.get(TaskService), scrape: async () => callCounts(await registry.metrics()) };
  }

  /** A grant and a task submit on `node`'s module: both measured, every call ok. */
  async function expectMeasured(node: string, { service, tasks, scrape }: Awaited<ReturnType<typeof start>>): Promise<void> {
    expect((await service.tryAcquire('calls-report')).granted).toBe(true);
    await tasks.submit({ type: 'export', name: 'daily' }); // the native task store's own calls too
    const granted = await scrape();
    expect(count(granted, `node="${node}",store="permits",outcome="ok"`)).toBeGreaterThan(0);
    expect(count(granted, `node="${node}",store="tasks",outcome="ok"`)).toBeGreaterThan(0);
    expect([...granted.keys()].filter((labels) => !labels.endsWith('outcome="ok"'))).toEqual([]);
  }

  it('on PostgreSQL: grants and tasks are measured, and calls on a pool that is gone count as unavailable', async () => {
    const pool = new Pool({ connectionString: testPostgresUrl(), max: 4 });
    const ended: { promise?: Promise<void> } = {};
    closing.push(() => ended.promise ?? pool.end());
    const node = 'pg-calls';
    const started = await start(node, { backend: 'postgres', postgres: { pool, mapPrefix: uniquePrefix('pg-calls') } });

    await expectMeasured(node, started);

    // The pool ends under the module (the feed's connection keeps the end pending): every call now fails.
    ended.promise = pool.end();
    expect((await started.service.tryAcquire('calls-later')).granted).toBe(false);
    expect(count(await started.scrape(), `node="${node}",store="permits",outcome="unavailable"`)).toBeGreaterThan(0);
  });

  it('on Redis: grants and tasks are measured, and calls on a map whose key the server cannot use count as unavailable', async () => {
    const mapPrefix = uniquePrefix('redis-calls');
    const node = 'redis-calls';
    await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh(); // a new prefix, not a lost one
    const started = await start(node, { backend: 'redis', redis: { mapPrefix } });

    await expectMeasured(node, started);

    // The semaphores' hash replaced by a string: the server refuses every script on it (WRONGTYPE).
    const redis = new Redis(testRedisUrl());
    closing.push(async () => {
      await redis.quit();
    });
    await redis.set(`{${mapPrefix}}:m:semaphores`, 'not a hash');
    expect((await started.service.tryAcquire('calls-later')).granted).toBe(false);
    expect(count(await started.scrape(), `node="${node}",store="permits",outcome="unavailable"`)).toBeGreaterThan(0);
  });
});
