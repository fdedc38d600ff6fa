import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { DenyReason, GatekeeperModule, GatekeeperService, InvalidInputError, RedisBackend, SemaphoreAdminService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/** The module on Redis, as an application switches to it: only the backend option changes. */
describe('GatekeeperModule on Redis', () => {
  const apps: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  // The second node is given the application's own client, as an application that already uses ioredis would (with
  // ioredis's defaults: the backend's connections made like it are held to sending each command once).
  const appClient = new Redis(testRedisUrl(), { lazyConnect: true });
  beforeAll(async () => {
    await appClient.connect();
  });
  afterAll(async () => {
    await appClient.quit();
  });

  async function node(mapPrefix: string, name: string, client?: Redis) {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        // The URL comes from GATEKEEPER_REDIS_URL (the test run's server) when no client is given.
        backend: 'redis',
        redis: client ? { client, mapPrefix } : { mapPrefix },
        identity: { acquirer: name },
        definitions: [{ name: 'redis-report', duration: '30s' }],
      })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    apps.push(app);
    return app;
  }

  it('grants a permit to one node, denies the other, hands it over on release with a larger token, and takes live edits', async () => {
    const mapPrefix = uniquePrefix('redis-module');
    await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh();
    const [a, b] = [await node(mapPrefix, 'node-a'), await node(mapPrefix, 'node-b', appClient)];
    const [ga, gb] = [a.get(GatekeeperService), b.get(GatekeeperService)];

    const held = await ga.tryAcquire('redis-report');
    expect(held.granted).toBe(true);
    const denied = await gb.tryAcquire('redis-report');
    expect(denied).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
    if (!held.granted) throw new Error('not granted');
    await ga.release(held.permit);
    const taken = await gb.tryAcquire('redis-report');
    expect(taken.granted).toBe(true);
    if (taken.granted) expect(taken.permit.fencingToken).toBeGreaterThan(held.permit.fencingToken);

    // A live edit on one node: a second permit, which the other node is granted.
    expect((await ga.tryAcquire('redis-report')).granted).toBe(false);
    await b.get(SemaphoreAdminService).putDefinition({ name: 'redis-report', permits: 2, duration: '30s' });
    await eventually('the edit granting node-a the second permit', async () => (await ga.tryAcquire('redis-report')).granted, { timeoutMs: 10_000 });
    // The application's client is the application's: the module sent nothing on it and left it open.
    await apps.splice(0).reduce((done, app) => done.then(() => app.close()), Promise.resolve());
    expect(appClient.status).toBe('ready');
  });

  it("refuses to start on 'redis' without a connection, naming the option and the variable", async () => {
    const url = process.env.GATEKEEPER_REDIS_URL;
    delete process.env.GATEKEEPER_REDIS_URL;
    try {
      const started = Test.createTestingModule({ imports: [GatekeeperModule.forRoot({ backend: 'redis' })] })
        .setLogger(new CapturingLogger()).compile().then(async (app) => {
          apps.push(app);
          await app.init();
        });
      const error = await started.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(/invalid redis: .*GATEKEEPER_REDIS_URL/);
    } finally {
      process.env.GATEKEEPER_REDIS_URL = url;
    }
  });
});
