import {
  checkHistory, gaps, newHistoryFile, useFaultCluster, readHistory, recordNemesis, startWorkloadNode,
  type HistoryEvent, type NemesisEvent, type StartEvent,
} from '../harness';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

const DURATION_MS = 6_000;

/**
 * Every member is stopped and started again while a job runs under its permit: the cluster comes back empty.
 * The holder is cut off meanwhile, so it cannot learn that its entry is gone: its lease keeps vouching until its
 * permit would have expired, so nothing may be granted under the rebuilt entries before then (a recovery, not a
 * fresh start). Tokens must keep growing, also for a release-mode job granted several times a second before.
 */
describe('a full cluster restart while a job runs', () => {
  const scene = useFaultCluster(1, { proxied: true });
  const { nodes } = scene;

  it('grants nothing until the old holder\'s lease has lapsed, and tokens keep growing', async () => {
    const historyFile = newHistoryFile('restart');
    const { cluster } = scene;
    const settings = {
      historyFile, cluster, mapPrefix: uniquePrefix('restart'), maxClockSkew: '200ms',
      jobs: [
        { semaphore: 'long', duration: DURATION_MS, intervalMs: 250, runMs: 60_000, effectEveryMs: 100 },
        // Release mode runs a tick once only with lockAtLeastFor covering how late another node may decide the same
        // tick (ShedLock's rule): without it, a node 90 ms late under CI load ran a tick the other had just released.
        { semaphore: 'often', duration: 2_000, intervalMs: 200, runMs: 10, effectEveryMs: 5, mode: 'release' as const, lockAtLeastFor: '150ms' },
      ],
    };
    const starts = (semaphore: string) => readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start' && e.semaphore === semaphore);
    nodes.push(...(await Promise.all(['node-a', 'node-b'].map((name) => startWorkloadNode({ ...settings, name })))));
    await eventually('the long job to run and the frequent one to be granted often', () => starts('long').length > 0 && starts('often').length >= 5, { timeoutMs: 15_000 });
    const before = starts('long')[0];
    const holder = nodes.find((n) => n.name === before.node)!;

    recordNemesis(historyFile, 'cut off the holder, stop all members');
    cluster.proxy(0).blackhole({ pid: holder.pid });
    await cluster.stopAll();
    await cluster.startAll();
    const restarted = recordNemesis(historyFile, 'restarted');
    await eventually('the long job to run under a new grant', () => starts('long').some((e) => e.token !== before.token), { timeoutMs: 30_000, intervalMs: 200 });
    cluster.proxy(0).heal({ pid: holder.pid });
    await eventually('the frequent job to run again', () => starts('often').some((e) => e.at > restarted.at), { timeoutMs: 10_000, intervalMs: 200 });
    // Killed, not stopped: a graceful stop would wait for the minute-long runs (shutdownTimeout).
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = readHistory(historyFile);
    // A start needs a quarter of its permit left (checked here at a fifth: the event is written a moment after the
    // check, on a loaded machine); the shorter permit (the frequent job's 2 s) sets the margin.
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: 2_000 / 5 });
    expect(violations).toEqual([]);
    const isRestart = (e: HistoryEvent): e is NemesisEvent => e.type === 'nemesis' && e.action === 'restarted';
    const [resumed] = gaps(history, isRestart, (e): e is StartEvent => e.type === 'start' && e.semaphore === 'long' && e.token !== before.token);
    // The old holder's lease could vouch until its permit's expiry: the new grant came no earlier.
    const lastOld = history.filter((e) => 'token' in e && e.token === before.token && e.type !== 'start').at(-1)!;
    expect(resumed.to!.at).toBeGreaterThanOrEqual(lastOld.at);
    process.stdout.write(`full restart while running: the old holder's last valid effect ${lastOld.at - restarted.at} ms after the restart, `
      + `first new grant ${resumed.ms} ms after it (recovery wait of the ${DURATION_MS} ms permit plus twice the skew bound); ${stats.runs} runs, tokens in order, 0 violations\n`);
  });
});
