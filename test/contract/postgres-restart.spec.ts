import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import type { MissedReason } from '../../lib/store/record-map';
import { eventually } from '../support/eventually';
import { ControlledPostgres } from '../support/postgres-control';

/**
 * The PostgreSQL backend when its server crashes (SIGKILL) and comes back: calls fail closed meanwhile, a watching
 * node is told it may have missed changes when its LISTEN connection goes and again when it is back, hears changes
 * again after, and what was acknowledged before the crash is still there, counters included.
 */
describe('PostgreSQL backend across a crash of its server', () => {
  let server: ControlledPostgres;
  const backends: PostgresBackend[] = [];
  beforeAll(async () => {
    server = await ControlledPostgres.start();
  });
  afterAll(async () => {
    await Promise.all(backends.map((backend) => backend.close()));
    await server?.quit();
  });

  it('fails closed while it is down, tells watchers disconnected then reconnected, and keeps what it acknowledged', async () => {
    const node = () => new PostgresBackend({ connectionString: server.url, callTimeoutMs: 2_000, listenCheckMs: 500, poolConfig: { connectionTimeoutMillis: 1_000 } });
    const [a, b] = [node(), node()];
    backends.push(a, b);
    await a.open();
    await b.open();
    const [ma, mb] = [await a.map('jobs'), await b.map('jobs')];
    const heard: Array<[string, string | null]> = [];
    const missed: MissedReason[] = [];
    await mb.watch({ changed: (key, value) => heard.push([key, value]), missed: (reason) => missed.push(reason) });
    await ma.create('before', 'v1');
    const token = (await (await a.counters()).next('tokens')).value;
    await eventually('the write heard', () => heard.some(([key]) => key === 'before'), { timeoutMs: 10_000 });

    await server.kill();
    await eventually('the watcher told it may have missed changes', () => missed.includes('disconnected'), { timeoutMs: 10_000 });
    await expect(ma.create('during', 'v1')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(mb.get('before')).rejects.toBeInstanceOf(StoreUnavailableError);

    await server.startAgain();
    // A watch made as the server comes back, while the feed waits to connect again: still one connection, each change
    // told once.
    const second: string[] = [];
    await eventually('a second watch in place', () => mb.watch({ changed: (key) => second.push(key), missed: () => undefined }).then(() => true, () => false), { timeoutMs: 10_000 });
    await eventually('the watcher told it listens again', () => missed.includes('reconnected'), { timeoutMs: 20_000 });
    expect(missed.indexOf('disconnected')).toBeLessThan(missed.lastIndexOf('reconnected'));
    // The pool's connections broke with the server: a call may fail once per broken connection, then works.
    await eventually('a write landing after the restart', () => ma.create('after', 'v2').then(() => true, () => false), { timeoutMs: 10_000 });
    await eventually('the new write heard', () => heard.some(([key]) => key === 'after') && second.includes('after'), { timeoutMs: 10_000 });
    await ma.replace({ key: 'after', value: 'v2' }, 'v3');
    await ma.create('last', 'v1');
    await eventually('the last write heard', () => second.includes('last'), { timeoutMs: 10_000 });
    expect(second.filter((key) => key === 'after')).toHaveLength(2);
    expect(heard.filter(([key]) => key === 'after')).toHaveLength(2);
    expect(await mb.get('before')).toEqual({ key: 'before', value: 'v1' });
    expect((await (await b.counters()).next('tokens')).value).toBeGreaterThan(token);
  }, 90_000);

  it('fails to open within its call timeout while the server is frozen, and opens once it answers', async () => {
    await server.freeze();
    try {
      const frozen = new PostgresBackend({ connectionString: server.url, callTimeoutMs: 1_000 });
      const started = Date.now();
      await expect(frozen.open()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await server.resume();
    }
    const thawed = new PostgresBackend({ connectionString: server.url, callTimeoutMs: 1_000 });
    backends.push(thawed);
    await eventually('the backend to open once the server answers', () => thawed.open().then(() => true, () => false), { timeoutMs: 10_000 });
  }, 30_000);
});
