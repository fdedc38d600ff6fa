import { Client } from 'hazelcast-client';
import {
  checkHistory, ControlledCluster, newHistoryFile, readHistory, recordNemesis, startWorkloadNode,
  type EffectEvent, type NodeProcess, type StartEvent,
} from '../harness';
import { eventually } from '../support/eventually';
import { declareFresh } from '../support/fresh-cluster';
import { uniquePrefix } from '../support/test-cluster';

/** The permit's duration: long enough for a node to start while the holder's lease still lives. */
const DURATION_MS = 9_000;
/** Both nodes tick every second, aligned to the second; a run works for four of them (no tick starts meanwhile). */
const TICK_MS = 1_000;
const RUN_MS = 4_000;
/** How long the holder's calls are held up on its link while the entry is removed. */
const LINK_DELAY_MS = 300;

/**
 * An outside client (an operator's script, a stray `map.clear()`, an eviction) removes a semaphore's entry while its
 * holder is running the job and its refresh of the permit is on the wire. The store no longer says who holds the
 * permit, but the holder's lease is still valid: nobody may be granted it until that lease could have lapsed. A node
 * that starts right after (a deploy, a scale-up) never saw the entry and has no definition of it but its decorator's:
 * only the removal's mark in the store tells it the entry was lost. Every node that hears the removal marks it, so
 * the newcomer waits out a permit's duration; before that mark it rebuilt the entry at once (the partition's canary
 * was intact) and ran next to the holder.
 */
describe('an entry removed from outside while its holder runs', () => {
  let cluster: ControlledCluster;
  let raw: Client;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    cluster = await ControlledCluster.start(1, { proxied: true });
    await declareFresh(cluster.clientConfig());
    raw = await Client.newHazelcastClient(cluster.clientConfig());
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    await raw?.shutdown();
    await cluster?.quit();
  });

  it('grants it to nobody before the holder\'s permit could have lapsed', async () => {
    const historyFile = newHistoryFile('outside-removal');
    const mapPrefix = uniquePrefix('removal');
    const common = {
      historyFile, cluster, mapPrefix, maxClockSkew: '200ms',
      jobs: [{ semaphore: 'billing', duration: DURATION_MS, intervalMs: TICK_MS, runMs: RUN_MS, effectEveryMs: 20 }],
    };
    const starts = (node?: string) => readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start' && (!node || e.node === node));
    const holder = await startWorkloadNode({ ...common, name: 'holder', definitions: [{ name: 'billing', duration: DURATION_MS }] });
    nodes.push(holder);
    await eventually('the holder to run', () => starts('holder').length >= 2, { timeoutMs: 20_000 });

    // The holder's calls held up on its link (its keep-alive refreshes are out longer); the entry goes as soon as a
    // new run of the holder has begun, so the run works on under its lease for seconds after.
    cluster.proxy(0).delay(LINK_DELAY_MS, { pid: holder.pid });
    const asked = Date.now();
    await eventually('a new run of the holder', () => starts('holder').some((e) => e.at > asked), { timeoutMs: RUN_MS + 3 * TICK_MS, intervalMs: 10 });
    // Right after one of its renewals, so most of a permit is left to vouch for the run: a newcomer's boot on a loaded
    // machine fits in it (removed just before a renewal, only a part would be left).
    await eventually('a renewal of the holder\'s lease', () => {
      const last = readHistory(historyFile).filter((e): e is EffectEvent => e.type === 'effect' && e.node === 'holder' && e.validUntil !== undefined).at(-1);
      return last !== undefined && last.validUntil! - Date.now() >= 0.7 * DURATION_MS;
    }, { timeoutMs: DURATION_MS, intervalMs: 20 });
    const removed = recordNemesis(historyFile, 'remove', 'billing, by an outside client, while its holder runs');
    await (await raw.getMap<string, string>(`${mapPrefix}.semaphores`)).delete('billing');
    // The holder hears the removal over its slow link (and marks the entry lost); then it is cut off, running on
    // under its lease, so only a node that never saw the entry can rebuild it.
    const marks = await raw.getMap<string, string>(`${mapPrefix}.lost-records`);
    await eventually('the holder to mark the entry lost (or a second to pass, for a build that marks nothing)',
      async () => (await marks.get('semaphores/billing')) !== null || Date.now() > removed.at + 1_000, { timeoutMs: 5_000, intervalMs: 50 });
    cluster.proxy(0).blackhole({ pid: holder.pid });
    recordNemesis(historyFile, 'blackhole', 'holder');
    // A node that never saw the entry starts while the holder's lease lives (its job defines billing if absent).
    nodes.push(await startWorkloadNode({ ...common, name: 'newcomer' }));
    // The holder's lease as last renewed before the removal (a run's start or a refresh seen by one of its effects).
    const heldUntil = Math.max(...readHistory(historyFile).filter((e): e is StartEvent | EffectEvent => (e.type === 'start' || e.type === 'effect')
      && e.node === 'holder' && e.at <= removed.at && e.validUntil !== undefined).map((e) => e.validUntil!));
    expect(Date.now()).toBeLessThan(heldUntil); // else this run proves nothing: make DURATION_MS longer

    // The newcomer runs it, after the recovery wait; then the holder's link is back.
    const resumed = await eventually('the newcomer to run billing', () => starts('newcomer')[0], { timeoutMs: 4 * DURATION_MS });
    cluster.proxy(0).heal({ pid: holder.pid });
    recordNemesis(historyFile, 'heal', 'holder');
    await eventually('one more run', () => starts().some((e) => e.at > resumed.at), { timeoutMs: 2 * (RUN_MS + TICK_MS) });
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
    recordNemesis(historyFile, 'end');

    const { violations, stats } = checkHistory(readHistory(historyFile), { permits: 1 });
    process.stdout.write(`outside removal (permit ${DURATION_MS} ms, holder's link delayed ${LINK_DELAY_MS} ms): run again by `
      + `${resumed.node} ${resumed.at - removed.at} ms after the removal (the holder's last lease before it was valid until `
      + `${heldUntil - removed.at} ms after); ${stats.runs} runs, max overlap ${stats.maxOverlapMs} ms, ${violations.length} violations\n`);
    // At most one valid lease at any instant: the removal handed the permit to nobody while the holder's lease lived.
    expect(violations).toEqual([]);
    // And nobody ran before the holder's lease could have lapsed.
    expect(resumed.at).toBeGreaterThanOrEqual(heldUntil);
  });
});
