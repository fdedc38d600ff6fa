import { Client } from 'hazelcast-client';
import { checkHistory, newHistoryFile, readHistory, recordNemesis, startWorkloadNode, useFaultCluster, type StartEvent } from '../harness';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

const SEMAPHORES = 40;
const DURATION_MS = 3_000;

/**
 * Two of three members are killed at once: the partitions whose primary and backup were both on them are lost,
 * with the entries in them, while other entries (and the epoch-like keys) survive. Every lost entry must be put
 * back by the nodes that know it, with a recovery wait, and every decorated job must run again.
 */
describe('partitions lost with two of three members', () => {
  const scene = useFaultCluster(3);
  const { nodes } = scene;

  it('puts every lost definition back and runs every job again, with no overlap', async () => {
    const historyFile = newHistoryFile('partitions');
    const { cluster } = scene;
    const names = Array.from({ length: SEMAPHORES }, (_, i) => `job-${i}`);
    const settings = {
      historyFile, cluster, mapPrefix: uniquePrefix('partitions'), maxClockSkew: '200ms',
      jobs: names.map((semaphore) => ({ semaphore, duration: DURATION_MS, intervalMs: 1_000, runMs: 20, effectEveryMs: 10 })),
    };
    const starts = () => readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start');
    const ranSince = (at: number) => new Set(starts().filter((e) => e.at > at).map((e) => e.semaphore));
    nodes.push(...(await Promise.all(['node-a', 'node-b'].map((name) => startWorkloadNode({ ...settings, name })))));
    await eventually('every job to run', () => ranSince(0).size === SEMAPHORES, { timeoutMs: 20_000 });

    const tokenBefore = new Map(starts().map((e) => [e.semaphore, e.token]));
    const killed = recordNemesis(historyFile, 'kill members 1 and 2 at once');
    await cluster.killMany([1, 2]);
    // Which entries the loss took (read on the survivor before any node could put them back would race, so
    // ask the nodes: each logs the entries it puts back).
    const probe = await Client.newHazelcastClient(cluster.clientConfig());
    const map = await probe.getMap<string, string>(`${settings.mapPrefix}.semaphores`);
    await eventually('every entry to exist again', async () => (await map.size()) === SEMAPHORES, { timeoutMs: 30_000, intervalMs: 250 });
    await probe.shutdown();
    const lost = names.filter((name) => nodes.some((n) => n.output().includes(`The entry of "${name}" was lost`)));
    expect(lost.length).toBeGreaterThan(0);
    // Every job runs again; a lost one under a new grant on its rebuilt entry.
    await eventually('every job to run again, the lost ones under new grants', () => {
      const after = starts().filter((e) => e.at > killed.at);
      return names.every((name) => after.some((e) => e.semaphore === name && (!lost.includes(name) || e.token > tokenBefore.get(name)!)));
    }, { timeoutMs: 40_000, intervalMs: 250 });
    const back = Date.now() - killed.at;
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));

    const { violations, stats } = checkHistory(readHistory(historyFile), { permits: 1, startMarginMs: DURATION_MS / 5 });
    expect(violations).toEqual([]);
    process.stdout.write(`partition loss (2 of 3 members killed at once): ${lost.length} of ${SEMAPHORES} entries lost and put back; every job ran again within ${back} ms `
      + `(recovery wait ${DURATION_MS} ms + twice the skew bound); ${stats.runs} runs, 0 violations\n`);
  });
});
