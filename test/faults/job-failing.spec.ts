import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import type { StoreBackend } from '../../lib/store/store-backend';
import { checkAlerts, checkHistory, newHistoryFile, readHistory, type HistoryEvent, type NodeProcess, type StoreTarget } from '../harness';
import { SCHEDULE_JOB, startScheduleNode, type ScheduleNodeSettings } from '../harness/schedule-node';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';

const STORES = [
  {
    on: 'Hazelcast', target: (): StoreTarget => testCluster(), fresh: async () => undefined,
    backend: (mapPrefix: string): StoreBackend => new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }),
  },
  {
    on: 'Redis', target: (): StoreTarget => ({ redisUrl: testRedisUrl() }),
    fresh: async (mapPrefix: string) => void (await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh()),
    backend: (mapPrefix: string): StoreBackend => new RedisBackend({ url: testRedisUrl(), mapPrefix }),
  },
  {
    on: 'PostgreSQL', target: (): StoreTarget => ({ postgresUrl: testPostgresUrl() }), fresh: async () => undefined,
    backend: (mapPrefix: string): StoreBackend => new PostgresBackend({ connectionString: testPostgresUrl(), mapPrefix }),
  },
];

const THRESHOLDS = { failureThreshold: 3, recoveryThreshold: 2 };
type Ended = HistoryEvent & { type: 'end'; outcome: string };
const ends = (file: string, outcome: string, node?: string) =>
  readHistory(file).filter((e): e is Ended => e.type === 'end' && (e as Ended).outcome === outcome && (node === undefined || e.node === node));
const alerts = (file: string) => readHistory(file).filter((e) => e.type === 'alert');

/**
 * A job that fails on one replica, whose node is then SIGKILLed, and goes on failing on another before it recovers:
 * with real processes (schedule-app.ts, a real @Cron under @ClusterSingleton, every second, hold mode) on each store.
 * The library says failing once, when the third failure in a row lands (two on the killed node, one on the survivor),
 * and recovered once after two successes; the checker reads only the history the processes wrote (runs and what each
 * node heard). The control is a naive monitor on each replica: the node that died and the one that took over each
 * say failing, and the checker must see a turn said twice.
 */
describe.each(STORES)('a failing job across a SIGKILLed replica, with real processes on $on', ({ on, target, fresh, backend }) => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
  });

  async function scene(label: string, alertsBy: 'library' | 'naive') {
    const historyFile = newHistoryFile(`failing-${label}`);
    const mapPrefix = uniquePrefix(`failing-${label}`);
    const failWhile = join(tmpdir(), `${mapPrefix}.fail`);
    await fresh(mapPrefix);
    writeFileSync(failWhile, 'fail');
    const settings = (name: string): ScheduleNodeSettings => ({
      name, historyFile, mapPrefix, cluster: target(),
      job: {
        semaphore: 'sched-ledger', cron: '* * * * * *', duration: '2s', runMs: 100, flushInterval: '300ms',
        definitions: [{ name: 'sched-ledger', duration: '2s' }], options: { health: THRESHOLDS }, failWhile, alerts: alertsBy,
      },
    });
    nodes.push(...(await Promise.all(['app-1', 'app-2'].map((name) => startScheduleNode(settings(name))))));
    const first = await eventually('two failed runs on the holder', () => {
      const failed = ends(historyFile, 'failed');
      return failed.length >= 2 ? failed[0].node : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    // Both in the cluster's history before the holder dies, so the streak it started is the cluster's.
    const store = new HistoryRecordStore(backend(mapPrefix));
    await store.connect();
    try {
      await eventually('the holder\'s failures in the cluster history', async () => ((await store.read(SCHEDULE_JOB))?.history.counts.failed ?? 0) >= 2, { timeoutMs: 10_000, intervalMs: 100 });
    } finally {
      await store.close();
    }
    await nodes.find((n) => n.name === first)!.kill();
    const survivor = first === 'app-1' ? 'app-2' : 'app-1';
    return { historyFile, failWhile, first, survivor };
  }

  it('says failing once, from the survivor, when the third failure lands; recovered once after two successes', async () => {
    const { historyFile, failWhile, first, survivor } = await scene(`${on}`, 'library');
    try {
      await eventually('the survivor to fail three times', () => ends(historyFile, 'failed', survivor).length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    } finally {
      rmSync(failWhile, { force: true });
    }
    await eventually('the job to recover', () => alerts(historyFile).some((e) => (e as { kind: string }).kind === 'recovered'), { timeoutMs: 30_000, intervalMs: 100 });
    // Two more successes (and flushes) after it: nothing more is said.
    const recoveredAt = Date.now();
    await eventually('two more successes', () => ends(historyFile, 'done', survivor).filter((e) => e.at > recoveredAt).length >= 2, { timeoutMs: 10_000, intervalMs: 100 });
    await eventually('a flush after them', () => Date.now() > recoveredAt + 2_600, { timeoutMs: 5_000, intervalMs: 100 });
    const history = readHistory(historyFile);
    const check = checkAlerts(history, SCHEDULE_JOB, THRESHOLDS);
    const said = check.alerts.map((a) => `${a.kind} by ${a.node}`);
    process.stdout.write(`failing job on ${on}: ${ends(historyFile, 'failed', first).length} failures on ${first} (SIGKILLed), ${ends(historyFile, 'failed', survivor).length} on ${survivor}; said: ${said.join(', ')}; ${check.violations.length} violations\n`);
    expect(check.violations).toEqual([]);
    expect(said).toEqual([`failing by ${survivor}`, `recovered by ${survivor}`]);
    expect(checkHistory(history, { permits: 1 }).violations).toEqual([]);
  }, 90_000);

  it('control: a naive monitor on each replica says failing twice, and the checker sees it', async () => {
    const { historyFile, failWhile, survivor } = await scene(`${on}-naive`, 'naive');
    try {
      await eventually('the survivor to fail', () => ends(historyFile, 'failed', survivor).length >= 1, { timeoutMs: 30_000, intervalMs: 100 });
      await eventually('its alert', () => alerts(historyFile).some((e) => e.node === survivor), { timeoutMs: 5_000, intervalMs: 100 });
    } finally {
      rmSync(failWhile, { force: true });
    }
    const check = checkAlerts(readHistory(historyFile), SCHEDULE_JOB, THRESHOLDS);
    expect(check.violations.length).toBeGreaterThan(0);
    expect(check.violations.join('\n')).toMatch(/a turn said twice|before 3 failed runs/);
  }, 90_000);
});

/**
 * A run past its maximum run time, with real processes on each store: two replicas run a job every 2 s whose runs
 * take 1.5 s, with `maxRunTime: '600ms'`. Each run is told to stop at its signal (it stops, `aborted` in the
 * history) and said overran once, by the node that ran it; no other node says it.
 */
describe.each(STORES)('a run past its maximum run time, with real processes on $on', ({ on, target, fresh }) => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
  });

  it('says each run that went past maxRunTime overran once, from the node that ran it', async () => {
    const historyFile = newHistoryFile('overran');
    const mapPrefix = uniquePrefix('overran');
    await fresh(mapPrefix);
    const settings = (name: string): ScheduleNodeSettings => ({
      name, historyFile, mapPrefix, cluster: target(),
      job: {
        semaphore: 'sched-overran', cron: '*/2 * * * * *', duration: '4s', runMs: 1_500, options: { maxRunTime: '600ms' },
        definitions: [{ name: 'sched-overran', duration: '4s' }], flushInterval: '300ms', alerts: 'library',
      },
    });
    nodes.push(...(await Promise.all(['app-1', 'app-2'].map((name) => startScheduleNode(settings(name))))));
    await eventually('three runs stopped', () => ends(historyFile, 'aborted').length >= 3, { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
    const overran = alerts(historyFile).filter((a) => (a as { kind?: string }).kind === 'overran');
    // One per stopped run, by its own node (a node's run ended, then it said so), none for a run that did not overrun.
    for (const node of ['app-1', 'app-2']) expect({ node, said: overran.filter((a) => a.node === node).length }).toEqual({ node, said: ends(historyFile, 'aborted', node).length });
    expect(ends(historyFile, 'done')).toEqual([]);
    expect(checkHistory(readHistory(historyFile), { permits: 1 }).violations).toEqual([]);
    process.stdout.write(`overran on ${on}: ${overran.length} run(s) stopped at 600 ms and said overran once each, by ${[...new Set(overran.map((a) => a.node))].join(', ')}\n`);
  });
});
