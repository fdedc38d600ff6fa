import { existsSync } from 'node:fs';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { systemClock } from '../../lib/core/clock';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { cli, CLI_BIN as BIN } from '../support/cli-process';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/**
 * The operator's command line on Redis (`--backend redis --redis-url`, or GATEKEEPER_BACKEND and
 * GATEKEEPER_REDIS_URL): the same commands over the same records an app writes, and `store init` for a new prefix.
 */
describe('nestjs-gatekeeper CLI on Redis (built binary, real server)', () => {
  const url = testRedisUrl();
  const mapPrefix = uniquePrefix('cli-redis');
  const env = { GATEKEEPER_BACKEND: 'redis', GATEKEEPER_REDIS_URL: url };
  const run = (...args: string[]) => cli(['--map-prefix', mapPrefix, ...args], env);
  const json = async (...args: string[]) => {
    const result = await run('--json', ...args);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return JSON.parse(result.stdout);
  };
  const closing: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(closing.map((close) => close()));
  });

  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first (npm test does)`);
  });

  it('declares a new prefix before any node used it, then refuses, and edits definitions and shows an app\'s permits', async () => {
    expect(await json('store', 'init')).toEqual({ store: `Redis prefix "${mapPrefix}"`, declared: true, alreadyNew: false, waitsLifted: [] });
    expect((await run('set', 'billing', '--duration', '30s', '--permits', '2')).code).toBe(0);
    // A second init declares nothing, and says so with its exit code, so a deploy script can tell.
    const again = await run('--json', 'store', 'init');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error).toMatchObject({ code: 'REJECTED', type: 'NothingDeclaredError' });
    expect(JSON.parse(again.stderr).error.message).toContain(`Redis prefix "${mapPrefix}" is in use already`);
    expect(await json('pause', 'billing')).toMatchObject({ permits: 0, pausedFrom: 2 });
    expect(await json('resume', 'billing')).toMatchObject({ permits: 2 });
    // An app node on the same records holds a permit at once (declared new: no recovery wait); the CLI sees it, and
    // force-releases it.
    const store = new PermitRecordStore(new RedisBackend({ url, mapPrefix }));
    await store.connect({ clock: systemClock });
    closing.push(() => store.close());
    const granted = await new PermitEngine(store, { acquirer: 'app-1', group: 'production', instance: 'app-1/1' }, systemClock).tryAcquire('billing');
    if (!granted.granted) throw new Error(granted.message);
    expect((await run('permits', 'billing')).stdout).toMatch(new RegExp(`billing\\s+app-1\\s+production\\s+${granted.permit.fencingToken}`));
    expect(await json('release', 'billing', String(granted.permit.fencingToken))).toMatchObject({ released: 'billing' });
    expect((await json('permits', 'billing'))[0].permits).toEqual([]);
    expect((await json('list')).map((d: { name: string }) => d.name)).toEqual(['billing']);
  });

  it('finds the store from GATEKEEPER_REDIS_URL alone, as the app reads it', async () => {
    const only = await cli(['--map-prefix', mapPrefix, '--json', 'list'], { ...{ GATEKEEPER_BACKEND: undefined, GATEKEEPER_PG_URL: undefined, GATEKEEPER_REDIS_URL: undefined, GATEKEEPER_HZ_MEMBERS: undefined, GATEKEEPER_HZ_CLUSTER_NAME: undefined }, GATEKEEPER_REDIS_URL: url });
    expect([only.code, only.stderr]).toEqual([0, '']);
    expect(JSON.parse(only.stdout).map((d: { name: string }) => d.name)).toContain('billing');
  });

  it('names --redis-url when --backend redis has none, and an unreachable server where it looked (no password shown)', async () => {
    const none = await cli(['--backend', 'redis', 'list'], { GATEKEEPER_REDIS_URL: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--redis-url');
    const away = await cli(['--backend', 'redis', '--redis-url', 'redis://someone:secret@127.0.0.1:1/0', '--connect-timeout', '1s', 'list']);
    expect(away.code).toBe(3);
    expect(away.stderr).toContain('cannot reach Redis at redis://someone:***@127.0.0.1:1/0');
    expect(away.stderr).not.toContain('secret');
  });
});
