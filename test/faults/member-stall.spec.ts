import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, runsOf, startWorkloadNode, useFaultCluster,
  type StartEvent,
} from '../harness';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

const DURATION_MS = 5_000;
const TICK_MS = 500;
const STALL_MS = 10_000;

/**
 * The only member freezes (a long GC pause, SIGSTOP) for twice the permit's duration while three processes tick
 * every half second. Decisions started before or during the stall must become denials (their deadline is a
 * quarter of the permit), never late grants; a method must never run concurrently with itself on one node; ticks
 * held up by the stall must not run in a burst afterwards; and no two nodes may run the job at once.
 */
describe('a frozen member under three ticking processes', () => {
  const scene = useFaultCluster(1);
  const { nodes } = scene;

  it('runs nothing on a late grant, nothing twice, nothing in a burst', async () => {
    const historyFile = newHistoryFile('stall');
    const { cluster } = scene;
    const settings = {
      historyFile, cluster, mapPrefix: uniquePrefix('stall'), maxClockSkew: '200ms',
      jobs: [
        { semaphore: 'billing', duration: DURATION_MS, intervalMs: TICK_MS, runMs: 100, effectEveryMs: 50 },
        // Runs longer than a tick: the next ticks find it still going.
        { semaphore: 'report', duration: DURATION_MS, intervalMs: TICK_MS, runMs: 1_200, effectEveryMs: 100 },
      ],
    };
    const starts = () => readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start');
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startWorkloadNode({ ...settings, name })))));
    await eventually('the jobs to run', () => new Set(starts().map((e) => e.semaphore)).size === 2 && starts().length > 6, { timeoutMs: 15_000 });

    recordNemesis(historyFile, 'freeze', 'member 0');
    await cluster.freeze(0);
    const frozenAt = Date.now();
    await eventually('the stall', () => Date.now() - frozenAt >= STALL_MS, { timeoutMs: STALL_MS + 1_000, intervalMs: 250 });
    await cluster.resume(0);
    const resumedAt = Date.now();
    recordNemesis(historyFile, 'resume', 'member 0');
    await eventually('the jobs to run again', () => starts().filter((e) => e.at > resumedAt).length >= 6, { timeoutMs: 20_000 });
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));

    const history = readHistory(historyFile);
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: DURATION_MS / 5 });
    expect(violations).toEqual([]);
    // A method never runs concurrently with itself on one node.
    const runs = runsOf(history);
    const selfOverlaps = runs.filter((r) => runs.some((o) => o !== r && o.pid === r.pid && o.job === r.job
      && o.start.at >= r.start.at && o.start.at < (r.events.at(-1)?.at ?? Infinity)));
    expect(selfOverlaps).toEqual([]);
    // No burst: in the second after the member came back, each node starts each job no more often than its
    // schedule fires (two ticks), plus one decision that was in flight and still within its deadline.
    const burst = Math.max(...['node-a', 'node-b', 'node-c'].flatMap((node) => ['billing', 'report'].map((job) =>
      runs.filter((r) => r.node === node && r.job === job && r.start.at >= resumedAt && r.start.at < resumedAt + 1_000).length)));
    expect(burst).toBeLessThanOrEqual(1 + 1_000 / TICK_MS);
    const during = runs.filter((r) => r.start.at > frozenAt + DURATION_MS / 4 && r.start.at < resumedAt).length;
    process.stdout.write(`member frozen ${STALL_MS} ms (permit ${DURATION_MS} ms, ticks ${TICK_MS} ms, 3 nodes): ${stats.runs} runs, `
      + `${during} started during the stall, at most ${burst} per node and job in the second after, 0 concurrent runs of a method on one node, 0 violations\n`);
  });
});
