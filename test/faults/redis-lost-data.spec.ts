import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode,
  type EffectEvent, type NodeProcess, type StartEvent, type WorkloadJob,
} from '../harness';
import { eventually } from '../support/eventually';
import { ControlledRedis } from '../support/redis-control';
import { TcpProxy } from '../harness/tcp-proxy';
import { uniquePrefix } from '../support/test-cluster';

// Redis's own losses of acknowledged data (a restart without persistence, a failover to a replica that missed
// writes) under a frozen holder. The faults every server suffers alike are in store-server.spec.ts.

const SKEW_MS = 200;
/** A long run in hold mode: kept alive by refreshes, it must stop by its lease when they cannot land. */
const LONG_MS = 4_000;
const LONG: WorkloadJob = { semaphore: 'long', duration: LONG_MS, intervalMs: 250, runMs: 60_000, effectEveryMs: 50 };

/** The last event of a run (by its token) other than its start. */
const lastOf = (semaphore: string, token: number, history: ReturnType<typeof readHistory>) =>
  history.filter((e) => 'semaphore' in e && e.semaphore === semaphore && 'token' in e && e.token === token && e.type !== 'start').at(-1);

/**
 * `names` node processes running `jobs` on the Redis at `url`, on a fresh prefix declared new (else its first use
 * counts as a loss: see RedisBackend.declareFresh), added to `nodes`; returns the history and its readers.
 */
async function startScene(url: string, nodes: NodeProcess[], label: string, jobs: WorkloadJob[], names: string[]) {
  const historyFile = newHistoryFile(label);
  const settings = { historyFile, cluster: { redisUrl: url }, mapPrefix: uniquePrefix(label), maxClockSkew: `${SKEW_MS}ms`, jobs };
  expect(await new RedisBackend({ url, mapPrefix: settings.mapPrefix }).declareFresh()).toBe(true);
  nodes.push(...(await Promise.all(names.map((name) => startWorkloadNode({ ...settings, name })))));
  const events = () => readHistory(historyFile);
  const starts = (semaphore: string) => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === semaphore);
  return { historyFile, settings, events, starts };
}

/** A Redis without persistence, restarted under a frozen holder: what a node that remembers nothing must do. */
describe('Redis restarted without its data under a frozen holder', () => {
  let server: ControlledRedis;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    server = await ControlledRedis.start({ appendonly: false });
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  const scene = (label: string, jobs: WorkloadJob[], names: string[]) => startScene(server.url, nodes, label, jobs, names);

  it('a restart that lost everything, the holder frozen: a node that remembers nothing waits out the permits granted before', async () => {
    const { historyFile, settings, events, starts } = await scene('redis-wiped', [LONG], ['holder']);
    await eventually('the long job to run', () => starts('long').length > 0, { timeoutMs: 20_000 });
    const before = starts('long')[0];
    const holder = nodes.find((n) => n.name === 'holder')!;
    // The holder stalls (a long GC, a VM paused) as Redis restarts without its data.
    holder.freeze();
    const killed = recordNemesis(historyFile, 'kill redis, holder frozen');
    await server.kill();
    await server.restart();
    // A node that never saw the store: it cannot tell a wiped store from a new one but by the missing incarnation.
    const fresh = await startWorkloadNode({ ...settings, name: 'newcomer' });
    nodes.push(fresh);
    const taken = await eventually('the newcomer to run the job', () => starts('long').find((e) => e.node === 'newcomer'), { timeoutMs: 30_000, intervalMs: 100 });
    holder.resume();
    await eventually('the resumed holder to end its run', () => lastOf('long', before.token, events())?.type === 'end', { timeoutMs: 2 * LONG_MS });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: LONG_MS / 5 });
    process.stdout.write(`redis wiped under a frozen holder: the newcomer ran the job ${taken.at - killed.at} ms after the kill (the holder's permit ${LONG_MS} ms), `
      + `token ${before.token} → ${taken.token}; ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(taken.token).toBeGreaterThan(before.token);
    expect(taken.at - killed.at).toBeGreaterThanOrEqual(LONG_MS);
  });

});

/**
 * A replica promoted after its primary died with writes it never got, the nodes' address moved to it (a proxy in
 * front, as a virtual IP or a DNS name would be). The grant the primary acknowledged after the replica stopped
 * following is gone; a node that starts on the promoted replica never saw it. It must find that the server is not the
 * one that wrote the state (its replication id) and wait out every permit before running the job, while the old
 * holder, frozen through the failover, still believes in its permit.
 */
describe('Redis failed over to a replica that missed writes, under a frozen holder', () => {
  let primary: ControlledRedis;
  let replica: ControlledRedis;
  let proxy: TcpProxy;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    primary = await ControlledRedis.start();
    replica = await ControlledRedis.startReplica(primary);
    proxy = await TcpProxy.listen({ target: { host: '127.0.0.1', port: primary.port } });
  });
  afterAll(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    await proxy?.close();
    await replica?.stop();
    await primary?.stop();
  });

  it('a newcomer on the promoted replica waits out the permits granted before; nothing runs twice, no token twice', async () => {
    const historyFile = newHistoryFile('redis-failover');
    const url = `redis://${proxy.address}`;
    const settings = { historyFile, cluster: { redisUrl: url }, mapPrefix: uniquePrefix('redis-failover'), maxClockSkew: `${SKEW_MS}ms`, jobs: [LONG] };
    expect(await new RedisBackend({ url, mapPrefix: settings.mapPrefix }).declareFresh()).toBe(true);
    const events = () => readHistory(historyFile);
    const starts = () => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === 'long');
    const start = async (name: string) => {
      const node = await startWorkloadNode({ ...settings, name });
      nodes.push(node);
      return node;
    };

    // The semaphore exists and is free (its first holder left gracefully) when the replica stops following.
    const first = await start('node-0');
    await eventually('the first node to run the job', () => starts().length > 0, { timeoutMs: 20_000 });
    await first.terminate();
    await eventually('the replica to have the release', () => replica.withClient(async (c) => (await c.info('replication')).includes('master_link_status:up')), { timeoutMs: 10_000 });
    recordNemesis(historyFile, 'the replica stops following');
    await replica.freeze(); // it misses everything from now on

    // Granted after that: the promoted replica will not have it.
    const holder = await start('holder');
    const granted = await eventually('the holder to be granted the job', () => starts().find((e) => e.node === 'holder'), { timeoutMs: 20_000 });
    holder.freeze();
    const failing = recordNemesis(historyFile, 'primary killed, replica promoted');
    await primary.kill();
    await replica.resume();
    await replica.promote();
    proxy.setTarget(`127.0.0.1:${replica.port}`);

    // A node that never saw the grant starts on the promoted replica; the frozen holder wakes while its permit is valid.
    await start('newcomer');
    const newcomerUp = Date.now();
    holder.resume();
    const again = await eventually('the job to run again', () => starts().find((e) => e.at > failing.at), { timeoutMs: 6 * LONG_MS, intervalMs: 100 });
    await eventually('it to work a while', () => events().filter((e) => e.type === 'effect' && e.token === again.token).length >= 5, { timeoutMs: 10_000 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: LONG_MS / 5 });
    // The holder's events told before the failover, by the history's own order (appended as they happened): their
    // times come from another process, and the holder is frozen within milliseconds of its grant.
    const failedOverAt = history.findIndex((e) => e.type === 'nemesis' && (e as { action?: string }).action === failing.action);
    const heldUntil = Math.max(...history.slice(0, failedOverAt).filter((e): e is StartEvent | EffectEvent => (e.type === 'start' || e.type === 'effect')
      && e.node === 'holder' && e.token === granted.token).map((e) => e.validUntil ?? 0));
    process.stdout.write(`redis failover: the holder's permit was valid ${heldUntil - newcomerUp} ms past the newcomer's start; the job ran again on `
      + `${again.node} ${again.at - failing.at} ms after the failover (permit ${LONG_MS} ms), token ${granted.token} → ${again.token}; `
      + `${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(heldUntil).toBeGreaterThan(newcomerUp); // what kept the job single is the newcomer waiting
    expect(again.token).toBeGreaterThan(granted.token);
    expect(again.at - failing.at).toBeGreaterThanOrEqual(LONG_MS);
  });
});

