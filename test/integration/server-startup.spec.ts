import { Test } from '@nestjs/testing';
import { GatekeeperModule, GatekeeperService, StoreUnreachableError, type GatekeeperModuleOptions } from '../../lib';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { TcpProxy } from '../harness/tcp-proxy';
import { CapturingLogger } from '../support/capturing-logger';
import { freePort } from '../support/free-port';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/**
 * Start-up on PostgreSQL and Redis as on a cluster: a server not up yet is waited for up to `connectTimeout`; a refused
 * login or a missing database fails at once; every failure is one line (no stack) naming the server, its address
 * without the password, where the address came from, and what to do.
 */
describe.each([
  {
    name: 'PostgreSQL',
    url: testPostgresUrl,
    options: (url: string, mapPrefix: string): GatekeeperModuleOptions => ({ backend: 'postgres', postgres: { connectionString: url, mapPrefix } }),
    source: 'postgres.connectionString',
    refusedLogin: (url: URL) => Object.assign(url, { username: 'nobody_here', password: 'secret' }),
    missingDatabase: (url: URL) => Object.assign(url, { pathname: '/no_such_database' }),
  },
  {
    name: 'Redis',
    url: testRedisUrl,
    options: (url: string, mapPrefix: string): GatekeeperModuleOptions => ({ backend: 'redis', redis: { url, mapPrefix, onWarning: () => undefined } }),
    source: 'redis.url',
    refusedLogin: (url: URL) => Object.assign(url, { username: 'nobody_here', password: 'secret' }),
    missingDatabase: (url: URL) => Object.assign(url, { pathname: '/99' }),
  },
])('$name: start-up waits for the server, and fails in one line', ({ name, url, options, source, refusedLogin, missingDatabase }) => {
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
  });

  async function boot(address: string, connectTimeout: string, mapPrefix = uniquePrefix('startup')) {
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ ...options(address, mapPrefix), connectTimeout, definitions: [{ name: 'job', duration: '10s' }] })],
    }).setLogger(logger).compile();
    const started = Date.now();
    const outcome = await app.init().then(() => undefined, (error: unknown) => error);
    closing.push(() => app.close().catch(() => undefined));
    return { app, logger, outcome, ms: Date.now() - started };
  }

  it('a closed port: waits out connectTimeout, then one line naming the address (no password) and where it came from', async () => {
    const closed = new URL(url());
    closed.port = String(await freePort());
    closed.password = 'secret';
    if (!closed.username) closed.username = 'someone';
    const { outcome, ms, logger } = await boot(closed.toString(), '2s');
    expect(outcome).toBeInstanceOf(StoreUnreachableError);
    const message = (outcome as Error).message;
    expect(message).toContain(`Cannot reach ${name} at`);
    expect(message).toContain(`:${closed.port}`);
    expect(message).toContain(`(from ${source}) within 2s`);
    expect(message).not.toContain('secret');
    expect((outcome as Error).stack).toBe(`StoreUnreachableError: ${message}`);
    expect(ms).toBeGreaterThanOrEqual(1_900);
    expect(logger.find('warn', `Waiting for ${name} at`)).toHaveLength(1);
  });

  it('a refused login and a missing database: at once, each named', async () => {
    const login = await boot(refusedLogin(new URL(url())).toString(), '20s');
    expect(login.outcome).toBeInstanceOf(StoreUnreachableError);
    expect((login.outcome as Error).message).toMatch(new RegExp(`^${name} at .* \\(from ${source.replace('.', '\\.')}\\) refused the login: `));
    expect((login.outcome as Error).message).not.toContain('secret');
    expect(login.ms).toBeLessThan(10_000);
    const database = await boot(missingDatabase(new URL(url())).toString(), '20s');
    expect(database.outcome).toBeInstanceOf(StoreUnreachableError);
    expect((database.outcome as Error).message).toMatch(new RegExp(`^${name} at .* has no such database: `));
    expect(database.ms).toBeLessThan(10_000);
  });

  it('a server that comes up within connectTimeout: the app starts and grants', async () => {
    const server = new URL(url());
    const port = await freePort();
    const late = new URL(url());
    late.port = String(port);
    const mapPrefix = uniquePrefix('startup');
    // A new Redis prefix is declared new, as its operator would (else its first grants wait out a possible loss).
    if (name === 'Redis') await new RedisBackend({ url: url(), mapPrefix }).declareFresh();
    const booting = boot(late.toString(), '20s', mapPrefix);
    // The server appears on that port 1.5 s later (a proxy to the test run's server, as a database starting beside the app).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const proxy = await TcpProxy.listen({ port, target: { host: server.hostname, port: Number(server.port) } });
    closing.push(() => proxy.close());
    const { app, outcome, ms } = await booting;
    expect(outcome).toBeUndefined();
    expect(ms).toBeGreaterThanOrEqual(1_400);
    expect(await app.get(GatekeeperService).tryAcquire('job')).toMatchObject({ granted: true });
  });
});
