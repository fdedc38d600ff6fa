import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { systemClock } from '../../lib/core/clock';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { HISTORY_MAPS, HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { emptyHistory } from '../../lib/schedules/job-history';
import { checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode, type StartEvent, type WorkloadJob } from '../harness';
import { cli } from '../support/cli-process';
import { useMoveTest, type MoveKind } from '../support/move-test';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

const SKEW_MS = 200;
/** A long run in hold mode: its holder on the old store keeps refreshing until the move marks the store as left. */
const LONG_MS = 4_000;
const LONG: WorkloadJob = { semaphore: 'long', duration: LONG_MS, intervalMs: 250, runMs: 60_000, effectEveryMs: 50 };
/** Short runs in release mode, several a second: every one of them on one store or the other, never both. */
const OFTEN: WorkloadJob = { semaphore: 'often', duration: 2_000, intervalMs: 200, runMs: 10, effectEveryMs: 5, mode: 'release', lockAtLeastFor: '150ms' };

/**
 * A running deployment moved from PostgreSQL to Redis, from Redis to PostgreSQL and from Hazelcast to Redis, with `nestjs-gatekeeper store move` (the built CLI), as a rolling
 * deploy does it: node-a keeps running on the old store while node-b starts on the new one; jobs run through the move. The
 * checker reads only the history both processes wrote: never two holders, tokens never back across the two stores,
 * and what the operator set on the old store (a paused definition of its own, a paused runtime schedule, the run
 * history) is on the new one.
 * The control starts the same two nodes without the move, and the checker must see them overlap.
 */
type Kind = MoveKind;

describe.each([
  { from: 'postgres' as Kind, to: 'redis' as Kind },
  { from: 'redis' as Kind, to: 'postgres' as Kind },
  { from: 'hazelcast' as Kind, to: 'redis' as Kind },
])('moving a running deployment from $from to $to (store move)', ({ from, to }) => {
  const { pgUrl, redisUrl, nodes, closing, env } = useMoveTest(from, to);

  /** Two nodes' settings on a fresh prefix of both stores (Redis's declared new, so its first grants need no wait). */
  async function scene(label: string) {
    const historyFile = newHistoryFile(`move-${label}`);
    const mapPrefix = uniquePrefix(`move-${label}`);
    if (!(await new RedisBackend({ url: redisUrl, mapPrefix }).declareFresh())) throw new Error(`prefix ${mapPrefix} was not new`);
    const settings = { historyFile, mapPrefix, maxClockSkew: `${SKEW_MS}ms`, jobs: [LONG, OFTEN] };
    const starts = (semaphore: string, node?: string) =>
      readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start' && e.semaphore === semaphore && (node === undefined || e.node === node));
    const start = async (name: string, on: Kind) => {
      const node = await startWorkloadNode({ ...settings, name, cluster: on === 'postgres' ? { postgresUrl: pgUrl } : on === 'redis' ? { redisUrl } : testCluster() });
      nodes.push(node);
      return node;
    };
    const move = (...args: string[]) => cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', 'store', 'move', 'all', '--from', from, '--to', to, '--max-clock-skew', `${SKEW_MS}ms`, ...args], env);
    const backendOf = (kind: Kind) => (kind === 'postgres' ? new PostgresBackend({ connectionString: pgUrl, mapPrefix })
      : kind === 'redis' ? new RedisBackend({ url: redisUrl, mapPrefix }) : new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }));
    return { historyFile, mapPrefix, starts, start, move, backendOf };
  }

  /** An admin on one store's permits, as an operator's tool would be. */
  async function adminOn(backend: PostgresBackend | RedisBackend | HazelcastBackend): Promise<{ admin: SemaphoreAdmin; store: PermitRecordStore }> {
    const store = new PermitRecordStore(backend);
    await store.connect({ clock: systemClock });
    closing.push(() => store.close());
    return { admin: new SemaphoreAdmin(store, systemClock), store };
  }

  /** The run history a store keeps: its records' keys, by map. */
  async function historyKeys(backend: PostgresBackend | RedisBackend | HazelcastBackend): Promise<string[]> {
    await backend.open();
    try {
      const keys = async (map: string) => (await (await backend.map(map)).list()).map((r) => `${map}/${r.key}`);
      return [...(await keys(HISTORY_MAPS.jobs)), ...(await keys(HISTORY_MAPS.ticks))].sort();
    } finally {
      await backend.close();
    }
  }

  it('prepare, start the new nodes, finish: one holder throughout, tokens above the old store\'s, the operator\'s edits there after', async () => {
    const { historyFile, mapPrefix, starts, start, move, backendOf } = await scene(`move-${from}`);
    const nodeA = await start('node-a', from);
    await eventually(`node-a to run both jobs on ${from}`, () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 30_000 });
    // What an operator set on the old store: a definition of its own, paused.
    const old = await adminOn(backendOf(from));
    await old.admin.put({ name: 'reports', duration: '7s', permits: 2 });
    await old.admin.pause('reports');
    // And the run history the old nodes kept of a job.
    const oldHistory = new HistoryRecordStore(backendOf(from));
    await oldHistory.connect();
    closing.push(() => oldHistory.close());
    await oldHistory.write('Reports.nightly', undefined, { ...emptyHistory('Reports.nightly'), revision: 1, counts: { completed: 3 }, missed: { count: 1, last: Date.now() - 60_000 }, updatedAt: Date.now() });

    // And a runtime schedule an operator added there through the CLI, then paused.
    const onStore = (kind: Kind, ...args: string[]) => cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', '--backend', kind, ...args], env);
    const definition = join(tmpdir(), `${mapPrefix}-schedule.json`);
    writeFileSync(definition, JSON.stringify({ id: 'nightly-export', cron: '0 0 3 * * *', timeZone: 'Europe/Paris', handler: 'export', data: { bucket: 'b1' }, duration: '30s' }));
    expect((await onStore(from, 'schedules', 'upsert', '--file', definition)).code).toBe(0);
    expect((await onStore(from, 'schedules', 'pause', 'nightly-export')).code).toBe(0);

    recordNemesis(historyFile, 'store move: prepare');
    const prepared = await move();
    expect([prepared.code, prepared.stderr]).toEqual([0, '']);
    expect(prepared.stdout).toContain('held there');
    await start('node-b', to);
    // node-b is up and held: node-a keeps running every job meanwhile.
    const held = starts('often', 'node-a').length;
    await eventually('node-a to keep running while node-b waits', () => starts('often', 'node-a').length >= held + 5, { timeoutMs: 20_000 });
    expect(starts('long', 'node-b').concat(starts('often', 'node-b'))).toEqual([]);

    // The old holder frozen as the move finishes (a GC pause, a stalled VM): it cannot refresh, so it does not hear
    // that its store was left; only the wait for its permit to lapse keeps the new store from granting beside it.
    const oldLong = starts('long', 'node-a').at(-1)!;
    nodeA.freeze();
    const finishing = recordNemesis(historyFile, 'store move: finish');
    const finished = await move('--finish');
    const done = recordNemesis(historyFile, 'store move: finished');
    expect([finished.code, finished.stdout]).toEqual([0, expect.stringContaining('marked as left')]);
    await eventually(`node-b to run the long job on ${to}`, () => starts('long', 'node-b').length > 0, { timeoutMs: 30_000 });
    // The history the old store had when the move finished (node-a, thawed, writes more there: left behind, as documented).
    const oldRuns = await historyKeys(backendOf(from));
    nodeA.resume();
    const ended = (e: ReturnType<typeof readHistory>[number]) => e.node === 'node-a' && 'token' in e && e.token === oldLong.token && (e.type === 'end' || e.type === 'abort');
    await eventually('the thawed old holder to end its run', () => readHistory(historyFile).some(ended), { timeoutMs: 2 * LONG_MS });
    await eventually(`node-b to run both jobs on ${to}`, () => starts('often', 'node-b').length >= 5, { timeoutMs: 30_000 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = readHistory(historyFile);
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: 400 });
    const lastOld = Math.max(...starts('often', 'node-a').map((e) => e.token), ...starts('long', 'node-a').map((e) => e.token));
    const firstNew = Math.min(...starts('often', 'node-b').map((e) => e.token), ...starts('long', 'node-b').map((e) => e.token));
    const newBefore = [...starts('long', 'node-b'), ...starts('often', 'node-b')].filter((e) => e.at < finishing.at);
    process.stdout.write(`store move ${from} → ${to}: finish took ${done.at - finishing.at} ms (permit ${LONG_MS} ms); node-b's first run ${Math.min(...starts('often', 'node-b').map((e) => e.at)) - done.at} ms after; `
      + `tokens ${lastOld} (last on ${from}) → ${firstNew} (first on ${to}); ${stats.runs} runs, ${violations.length} violations\n`);
    expect(violations).toEqual([]);
    expect(newBefore).toEqual([]);
    expect(firstNew).toBeGreaterThan(lastOld);

    // What the operator set is on Redis, and the old store refuses edits.
    const moved = await adminOn(backendOf(to));
    expect(await moved.admin.get('reports')).toMatchObject({ permits: 0, pausedFrom: 2, durationMs: 7_000 });
    expect(oldRuns).toContain(`${HISTORY_MAPS.jobs}/Reports.nightly`);
    expect(await historyKeys(backendOf(to))).toEqual(expect.arrayContaining(oldRuns));
    const schedule = await onStore(to, '--json', 'schedules', 'show', 'nightly-export');
    expect([schedule.code, schedule.stderr]).toEqual([0, '']);
    expect(JSON.parse(schedule.stdout)).toMatchObject({
      id: 'nightly-export', definition: { cron: '0 0 3 * * *', timeZone: 'Europe/Paris', handler: 'export', data: { bucket: 'b1' }, durationMs: 30_000, paused: true },
    });
    const refused = await cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', '--backend', from, 'resume', 'reports'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`no live node uses this store for permits: it moved to the ${to} store`);
    const status = await cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', '--backend', from, 'status'], env);
    expect([status.code, status.stdout]).toEqual([0, expect.stringContaining(`permits: moved to the ${to} store on `)]);
    expect((await old.admin.get('reports')).permits).toBe(0);
  }, 120_000);

  it('control: the same two nodes without the move overlap (the checker sees two holders across the stores)', async () => {
    const { historyFile, starts, start } = await scene(`control-${from}`);
    await start('node-a', from);
    await eventually(`node-a to run on ${from}`, () => starts('long', 'node-a').length > 0, { timeoutMs: 30_000 });
    await start('node-b', to);
    const effects = (node: string) => readHistory(historyFile).filter((e) => e.type === 'effect' && 'semaphore' in e && e.semaphore === 'long' && e.node === node).length;
    await eventually(`node-b to run on ${to} too`, () => starts('long', 'node-b').length > 0 && effects('node-b') >= 5, { timeoutMs: 30_000 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    const { violations } = checkHistory(readHistory(historyFile), { permits: 1 });
    expect(violations.some((v) => v.kind === 'overlap')).toBe(true);
  }, 90_000);
});
