import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { StoreBackend } from '../../lib/store/store-backend';
import type { StoreTarget } from '../harness/store-target';
import { ControlledRedis } from '../support/redis-control';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { ScheduleCatalog } from '../../lib/schedules/schedule-catalog';
import { ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';
import { ControlledCluster, newHistoryFile, readHistory, type NodeProcess, type StartEvent } from '../harness';
import { startScheduleNode } from '../harness/schedule-node';
import { eventually } from '../support/eventually';
import { declareFresh } from '../support/fresh-cluster';
import { uniquePrefix } from '../support/test-cluster';

type Start = StartEvent & { instant?: number };

/** A store that loses everything on a full restart, as the scene drives it. */
interface LosingStore {
  readonly target: StoreTarget;
  /** A backend of the test's own on the scene's prefix. */
  backend(mapPrefix: string): StoreBackend;
  /** Declares the scene's prefix new, where the store needs it. */
  declareNew(mapPrefix: string): Promise<void>;
  /** Every server stops and starts again with nothing. */
  restartEmpty(): Promise<void>;
  close(): Promise<void>;
}

async function hazelcast(): Promise<LosingStore> {
  const cluster = await ControlledCluster.start(1);
  await declareFresh(cluster.clientConfig());
  return {
    target: { clusterName: cluster.clusterName, addresses: cluster.addresses },
    backend: (mapPrefix) => new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: cluster.clientConfig() }), mapPrefix }),
    declareNew: async () => undefined,
    restartEmpty: async () => {
      await cluster.stopAll();
      await cluster.startAll();
    },
    close: () => cluster.quit(),
  };
}

async function redisWithoutPersistence(): Promise<LosingStore> {
  const server = await ControlledRedis.start({ appendonly: false });
  return {
    target: { redisUrl: server.url },
    backend: (mapPrefix) => new RedisBackend({ url: server.url, mapPrefix }),
    declareNew: async (mapPrefix) => {
      expect(await new RedisBackend({ url: server.url, mapPrefix }).declareFresh()).toBe(true);
    },
    restartEmpty: async () => {
      await server.kill();
      await server.restart();
    },
    close: () => server.stop(),
  };
}

/**
 * A store that loses everything on a restart: the open-source Hazelcast member keeps nothing on disk, and a Redis
 * without persistence neither. Two real nodes run the runtime schedules `keep` and `gone` (every second) and an
 * operator removes `gone`; then every server stops and starts again, empty. The nodes must write back the catalog they hold, `gone` as the tombstone it was (a removed
 * schedule stays removed), and the run history they hold, each saying so once; `keep` runs again.
 */
describe.each([
  { store: 'a full Hazelcast restart (the open-source member keeps nothing on disk)', start: hazelcast },
  { store: 'a restart of Redis without persistence', start: redisWithoutPersistence },
])('runtime schedules and their history through $store', ({ start }) => {
  let losing: LosingStore | undefined;
  const nodes: NodeProcess[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    for (const close of closers) await close().catch(() => undefined);
    await losing?.close();
  });

  it('restores the schedules (the removed one stays removed) and the history, never silently', async () => {
    losing = await start();
    const historyFile = newHistoryFile('schedule-restart');
    const mapPrefix = uniquePrefix('durable');
    await losing.declareNew(mapPrefix);
    const env = { RUNTIME_SCHEDULES: JSON.stringify([{ id: 'keep', cron: '* * * * * *' }, { id: 'gone', cron: '* * * * * *' }]) };
    const started = await Promise.all(['node-a', 'node-b'].map((name) => startScheduleNode({
      name, historyFile, mapPrefix, env, cluster: losing!.target,
      job: { semaphore: 'decorated', cron: '*/2 * * * * *', duration: '3s', runMs: 50, keep: 500 },
    })));
    nodes.push(...started);
    const starts = (job: string) => readHistory(historyFile).filter((e): e is Start => e.type === 'start' && e.job === job);

    // An operator removes `gone` through the library's catalog; the nodes stop running it once they hear of it.
    const backend = () => losing!.backend(mapPrefix);
    const store = new ScheduleRecordStore(backend());
    await store.connect();
    closers.push(() => store.close());
    await eventually('both schedules to run', () => starts('keep').length > 0 && starts('gone').length > 0, { timeoutMs: 60_000, intervalMs: 200 });
    const removed = await new ScheduleCatalog(store, { by: 'operator' }).remove('gone');
    const removedAt = Date.now();
    // The views hear of it by its event (or the re-read after missed changes); a run already deciding may still start just after.
    await eventually('keep to run 3 s past the removal', () => starts('keep').some((s) => s.tick * 1000 >= removedAt + 3_000), { timeoutMs: 30_000, intervalMs: 200 });
    const keepRunsBefore = starts('keep').length;

    // Every server stops, and starts again empty.
    const stoppedAt = Date.now();
    await losing.restartEmpty();
    const restartedAt = Date.now();
    await eventually('keep to run again after the restart', () => starts('keep').some((s) => s.tick * 1000 >= restartedAt), { timeoutMs: 90_000, intervalMs: 250 });
    const resumedMs = Math.min(...starts('keep').filter((s) => s.tick * 1000 >= restartedAt).map((s) => s.tick * 1000)) - restartedAt;
    await eventually('keep to run 5 s past its return', () => starts('keep').some((s) => s.tick * 1000 >= restartedAt + resumedMs + 5_000), { timeoutMs: 60_000, intervalMs: 250 });

    // The removed schedule stayed removed: the tombstone is back at its revision, and it never ran again.
    const gone = await store.read('gone');
    expect({ live: gone.record?.definition !== null, revision: gone.record?.revision }).toEqual({ live: false, revision: removed.revision });
    expect(starts('gone').filter((s) => s.tick * 1000 >= removedAt + 2_000)).toEqual([]);
    expect((await store.read('keep')).record?.definition).toMatchObject({ id: 'keep', cron: '* * * * * *' });

    // The history of `keep` came back: the runs from before the restart (every one that started 2 s before the
    // members stopped was written: the nodes write every 500 ms) are in it again, with those since; a history made
    // anew would hold only the latter. Written back within the nodes' check of what they hold (30 s).
    const history = new HistoryRecordStore(backend());
    await history.connect();
    closers.push(() => history.close());
    const flushedBefore = starts('keep').filter((s) => s.tick * 1000 < stoppedAt - 2_000).map((s) => s.tick * 1000);
    expect(flushedBefore.length).toBeGreaterThanOrEqual(3);
    let counted = 0;
    await eventually('the history of keep to hold the runs from before the restart', async () => {
      const found = (await history.read('keep'))?.history;
      const instants = new Set(found?.runs.map((r) => r.instant));
      counted = Object.values(found?.counts ?? {}).reduce((sum: number, n) => sum + (n ?? 0), 0);
      return flushedBefore.every((at) => instants.has(at)) && found!.runs.some((r) => r.startedAt >= restartedAt) && counted >= found!.runs.length - 1;
    }, { timeoutMs: 60_000, intervalMs: 500 });

    // Said once, by the node whose write brought each schedule back; the history's loss is an ERROR.
    const outputs = nodes.map((n) => n.output());
    const restoredLines = outputs.flatMap((o) => o.split('\n').filter((l) => l.includes('Runtime schedules: the store lost data')));
    expect(restoredLines.join('\n')).toMatch(/keep/);
    expect(restoredLines.join('\n')).toMatch(/removed one\(s\) removed: gone/);
    expect(restoredLines.filter((l) => l.includes('restored') && /\bkeep\b/.test(l))).toHaveLength(1);
    const historyRestored = outputs.join('\n').split('\n').flatMap((l) => /ERROR.*Run history: the store lost data .*Written back from this node's memory: the history of (.*?)\. The history of jobs/.exec(l)?.[1].split(', ') ?? []);
    expect(historyRestored.filter((job) => job === 'keep')).toHaveLength(1);
    process.stdout.write(`${losing.target && 'redisUrl' in losing.target ? 'redis' : 'hazelcast'} restart with runtime schedules: keep ran ${keepRunsBefore} times before, again ${resumedMs} ms after the restart; gone stayed removed (revision ${removed.revision}); ${restoredLines.length} restore line(s); history counts ${counted} runs (${flushedBefore.length} from before)\n`);
  });
});
