import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode,
  type EffectEvent, type NodeProcess, type StartEvent, type WorkloadJob,
} from '../harness';
import { TcpProxy } from '../harness/tcp-proxy';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/** A long run in hold mode, kept alive by refreshes: when they cannot land it must stop by its lease. */
const LEASE_MS = 3_000;
const JOB: WorkloadJob = { semaphore: 'skewed', duration: LEASE_MS, intervalMs: 250, runMs: 120_000, effectEveryMs: 50 };
/** How far the machines' wall clocks are off real time: the holder's behind, the other node's ahead. */
const OFF_MS = 3_000;

/**
 * Where the store has a clock (PostgreSQL, Redis), no wall clock stretches a lease: the holder H runs on a machine
 * whose clock is 3 s behind, the other node F on one 3 s ahead (6 s apart, twelve times the default `maxClockSkew`),
 * H's clock steps back 3 s more (an NTP step) just as H is cut off from the store in the middle of a long run. The
 * store's clock decides F's grant and H counts its lease on its monotonic clock, so H stops before F starts. Real
 * processes with their whole wall clock moved (shift-clock.cjs), a proxy that blackholes H's connections, and the
 * checker on the history (in real time).
 */
describe.each([
  { backend: 'PostgreSQL', url: () => testPostgresUrl(), target: (url: string) => ({ postgresUrl: url }) },
  { backend: 'Redis', url: () => testRedisUrl(), target: (url: string) => ({ redisUrl: url }) },
])('$backend: wall clocks 6 s apart and an NTP step', ({ backend, url, target }) => {
  let proxy: TcpProxy;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    const server = new URL(url());
    proxy = await TcpProxy.listen({ target: { host: server.hostname, port: Number(server.port || (backend === 'Redis' ? 6379 : 5432)) } });
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    proxy.heal();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('the holder, cut off, stops before the other node is granted: no overlap', async () => {
    const historyFile = newHistoryFile(`skew-${backend.toLowerCase()}`);
    const mapPrefix = uniquePrefix('skew');
    if (backend === 'Redis') expect(await new RedisBackend({ url: url(), mapPrefix }).declareFresh()).toBe(true);
    const through = new URL(url());
    through.host = proxy.address;
    const settings = { historyFile, cluster: target(through.toString()), mapPrefix, jobs: [JOB] };
    const events = () => readHistory(historyFile);
    const starts = (node: string) => events().filter((e): e is StartEvent => e.type === 'start' && e.node === node);

    const holder = await startWorkloadNode({ ...settings, name: 'behind', wallClockShiftMs: -OFF_MS, wallClockStepMs: -OFF_MS });
    nodes.push(holder);
    await eventually('the node behind to run the job', () => starts('behind').length > 0, { timeoutMs: 20_000 });
    nodes.push(await startWorkloadNode({ ...settings, name: 'ahead', wallClockShiftMs: OFF_MS }));

    const cut = recordNemesis(historyFile, 'blackhole the holder and step its clock back', { node: holder.name });
    proxy.blackhole({ pid: holder.pid });
    process.kill(holder.pid, 'SIGUSR2');
    const effectsOf = (node: string) => events().filter((e): e is EffectEvent => e.type === 'effect' && e.node === node);
    await eventually('the node ahead to take the job over and work it', () => effectsOf('ahead').length >= 10, { timeoutMs: 10 * LEASE_MS, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1 });
    const lastByHolder = Math.max(...effectsOf('behind').map((e) => e.at));
    const takeover = starts('ahead')[0].at;
    process.stdout.write(`${backend}, wall clocks ${-OFF_MS} ms and +${OFF_MS} ms, holder stepped ${-OFF_MS} ms and cut off: last effect `
      + `${lastByHolder - cut.at} ms after the cut, takeover ${takeover - cut.at} ms after it (gap ${takeover - lastByHolder} ms); `
      + `${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(takeover).toBeGreaterThan(lastByHolder);
  });
});
