import Redis from 'ioredis';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import type { RecordMap } from '../../lib/store/record-map';
import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode,
  type NodeProcess, type StartEvent, type WorkloadJob,
} from '../harness';
import { TcpProxy } from '../harness/tcp-proxy';
import { eventually } from '../support/eventually';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/**
 * A node's connection reset while its script runs: the server applied the write, its answer never came back. The call
 * must end as a write of unknown outcome (`StoreTimeoutError`), never as a definite answer. The danger is the client
 * sending the command again on the new connection (ioredis's `autoResendUnfulfilledCommands`, on by default): the
 * second run's answer (a compare-and-set that finds its own write: not written) would stand for the first's.
 */
/** A long run in hold mode, kept alive by refreshes four times a second. */
const LONG_MS = 4_000;
const LONG: WorkloadJob = { semaphore: 'long', duration: LONG_MS, intervalMs: 250, runMs: 60_000, effectEveryMs: 50 };
/** Short runs in release mode, granted several times a second: some grant or release is always in flight. */
const OFTEN_MS = 2_000;
const OFTEN: WorkloadJob = { semaphore: 'often', duration: OFTEN_MS, intervalMs: 100, runMs: 10, effectEveryMs: 5, mode: 'release', lockAtLeastFor: '50ms' };
/** How long the holder's answers are held before its connections are reset: several of its calls land unanswered. */
const HELD_MS = 1_000;

describe('Redis: a connection reset mid-script', () => {
  let proxy: TcpProxy;
  const nodes: NodeProcess[] = [];
  const closing: Array<() => Promise<unknown> | void> = [];
  beforeAll(async () => {
    const { hostname, port } = new URL(testRedisUrl());
    proxy = await TcpProxy.listen({ target: { host: hostname, port: Number(port) } });
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    proxy.heal();
    await Promise.all(closing.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await proxy?.close();
  });

  /** A write through the proxy whose answer is held, applied on the server, then the connection reset. */
  async function resetMidWrite(backend: RedisBackend, write: (map: RecordMap) => Promise<unknown>, applied: (direct: Redis) => Promise<boolean>) {
    await backend.open();
    closing.push(() => backend.close());
    const map = await backend.map('things');
    const direct = new Redis(testRedisUrl());
    closing.push(() => direct.disconnect());
    proxy.blackhole({ direction: 'toClient' });
    const outcome = write(map).then((value) => ({ value }), (error: unknown) => ({ error }));
    await eventually('the write to land on the server', () => applied(direct), { timeoutMs: 5_000, intervalMs: 10 });
    proxy.reset();
    proxy.heal();
    return outcome;
  }

  it.each([
    { client: 'the backend\'s own', own: true },
    { client: 'the application\'s, with ioredis\'s defaults (offline queue, resend on reconnect)', own: false },
  ])('a create whose answer was lost ends as unknown, never as "not created" ($client client)', async ({ own }) => {
    const mapPrefix = uniquePrefix('redis-reset');
    const url = `redis://${proxy.address}`;
    let app: Redis | undefined;
    if (!own) {
      app = new Redis(url);
      app.on('error', () => undefined);
      closing.push(() => app!.disconnect());
    }
    await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh();
    const backend = new RedisBackend({ ...(app ? { client: app } : { url }), mapPrefix, onWarning: () => undefined, callTimeoutMs: 3_000 });
    const outcome = await resetMidWrite(backend, (map) => map.create('k', 'v1'),
      async (direct) => (await direct.hget(`{${mapPrefix}}:m:things`, 'k')) === 'v1');
    process.stdout.write(`redis reset mid-create (${own ? 'own' : 'application'} client): ${'error' in outcome ? (outcome.error as Error).constructor.name : `answered ${String(outcome.value)}`}\n`);
    expect('error' in outcome ? outcome.error : outcome.value).toBeInstanceOf(StoreTimeoutError);
  });

  it('under running jobs: the holder\'s calls land unanswered, its connections reset; one holder at a time, tokens only grow', async () => {
    const historyFile = newHistoryFile('redis-reset-mid-script');
    const url = `redis://${proxy.address}`;
    const settings = { historyFile, cluster: { redisUrl: url }, mapPrefix: uniquePrefix('redis-reset-jobs'), maxClockSkew: '200ms', jobs: [LONG, OFTEN] };
    expect(await new RedisBackend({ url: testRedisUrl(), mapPrefix: settings.mapPrefix }).declareFresh()).toBe(true);
    nodes.push(...(await Promise.all(['node-a', 'node-b'].map((name) => startWorkloadNode({ ...settings, name })))));
    const events = () => readHistory(historyFile);
    const starts = (semaphore: string) => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === semaphore);
    await eventually('the long job to run and the frequent one to be granted often', () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 20_000 });
    const before = starts('long')[0];
    const holder = nodes.find((n) => n.name === before.node)!;

    // The holder's requests reach Redis and run; their answers are held, then its connections reset.
    const held = recordNemesis(historyFile, 'hold the holder\'s answers', { node: holder.name });
    proxy.blackhole({ pid: holder.pid, direction: 'toClient' });
    await eventually('the hold to last', () => Date.now() >= held.at + HELD_MS, { timeoutMs: 2 * HELD_MS });
    const reset = recordNemesis(historyFile, 'reset the holder\'s connections', { node: holder.name });
    const dropped = proxy.reset({ pid: holder.pid });
    proxy.heal();
    // The long run may go on under its permit (a refresh lands once the node reconnects) or stop by its lease and
    // start again: either way the job is worked past the lease after the reset, and the frequent one keeps running.
    const worked = (at: number) => events().some((e) => e.type === 'effect' && 'semaphore' in e && e.semaphore === 'long' && e.at > at);
    await eventually('both jobs to be worked past a lease after the reset', () => worked(reset.at + LONG_MS)
      && starts('often').filter((e) => e.at > reset.at).length >= 5, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: OFTEN_MS / 5 });
    const longTokens = [...new Set(history.filter((e) => e.type === 'start' && e.semaphore === 'long').map((e) => (e as StartEvent).token))];
    process.stdout.write(`redis reset mid-script: ${dropped} connections of ${holder.name} reset after its answers were held ${reset.at - held.at} ms; `
      + `long job tokens ${longTokens.join(' → ')} (first ${before.token}); often ran ${starts('often').filter((e) => e.at > reset.at).length} times after; `
      + `${stats.runs} runs, ${violations.length} violations\n`);
    expect(dropped).toBeGreaterThan(0);
    expect(violations).toEqual([]);
  });
});
