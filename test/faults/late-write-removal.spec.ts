import { decodeEntry } from '../../lib/permits/semaphore-entry.codec';
import {
  checkHistory, newHistoryFile, ownerIndex, readHistory, recordNemesis, startWorkloadNode, useFaultCluster,
  type EffectEvent, type StartEvent,
} from '../harness';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

/** The permit's duration: each decision waits a quarter of it (2 s) before it gives up on the store. */
const DURATION_MS = 8_000;
const DEADLINE_MS = DURATION_MS / 4;
/**
 * The holder ticks every 3 s with short runs: it answers from its view while more than half its permit is left, so
 * it writes every other tick, and nothing of it asks the store between a timed-out write and the next tick.
 */
const TICK_MS = 3_000;
const RUN_MS = 300;
const SKEW_MS = 200;
/** A second job of the holder, released after every run: its writes keep the holder's store calls going. */
const SIDE = { duration: 4_000, intervalMs: 250, runMs: 10, effectEveryMs: 5, mode: 'release' as const };

/**
 * A holder's refresh lands on the member, but its answer does not come back before the call's deadline: the member
 * that keeps the entry's backup is slow to acknowledge it (its backup acknowledgements to the holder are held on the
 * wire; everything else flows), and a smart client completes a write only once its backups are acknowledged. The
 * node gives up on the write (`STORE_TIMEOUT`). Then an outside client removes the entry, the holder hears the
 * removal and reads the absence, and only then does the late answer arrive, saying the write landed.
 *
 * "A view never puts back a value the store no longer has" (docs/guarantees.md): a write's answer is taken into the
 * view only if no absence of the entry was seen while it was in flight. Were the late answer taken in, the holder's
 * view would hold its refreshed permit, valid for seconds more, while the store has no entry: its next tick answers
 * from the view (more than half the permit left) and runs the job on a permit nobody else can see. The entry counts
 * as lost, so whoever puts it back waits out every permit it could hold, the late-landed refresh's included.
 */
describe('a write whose answer comes after its deadline, followed by a removal', () => {
  const fault = useFaultCluster(2, { proxied: true, outside: true });
  const { nodes } = fault;

  it('leaves the holder acting on nothing the store lost, and grants nobody the permit before the late write\'s lease lapsed', async () => {
    const { cluster, outside: raw } = fault;
    const historyFile = newHistoryFile('late-write-removal');
    const mapPrefix = uniquePrefix('late-write');
    // The entry's primary on one member, its backup (whose acknowledgements are held) on the other; the holder's other
    // writes (its side job, the removal's lost mark) have their primary there, so their acknowledgements are not held.
    const owner = 0;
    const backup = 1;
    const owned = (key: string) => ownerIndex(raw, key, cluster.addresses);
    const billing = firstName('billing-', (name) => owned(name) === owner && owned(`semaphores/${name}`) === backup);
    const side = firstName('side-', (name) => owned(name) === backup);
    const common = { historyFile, cluster, mapPrefix, maxClockSkew: `${SKEW_MS}ms` };
    const billingJob = { semaphore: billing, duration: DURATION_MS, intervalMs: TICK_MS, runMs: RUN_MS, effectEveryMs: 20 };
    const events = () => readHistory(historyFile);
    const starts = (node?: string) => events().filter((e): e is StartEvent => e.type === 'start' && e.semaphore === billing && (!node || e.node === node));
    const semaphores = await raw.getMap<string, string>(`${mapPrefix}.semaphores`);
    const marks = await raw.getMap<string, string>(`${mapPrefix}.lost-records`);

    const holder = await startWorkloadNode({
      ...common, name: 'holder', jobs: [billingJob, { semaphore: side, ...SIDE }],
      definitions: [{ name: billing, duration: DURATION_MS }, { name: side, duration: SIDE.duration }],
    });
    nodes.push(holder);
    await eventually('the holder to run billing', () => starts('holder').length >= 1, { timeoutMs: 20_000 });

    // From here on, the backup member's acknowledgements to the holder are held: its next refresh lands, unanswered.
    const before = (await semaphores.get(billing))!;
    const outputBefore = holder.output().length;
    cluster.proxy(backup).holdBackupAcks({ pid: holder.pid });
    recordNemesis(historyFile, 'hold-backup-acks', { member: backup, node: 'holder' });
    const landedRaw = await eventually('the holder\'s refresh to land', async () => {
      const now = await semaphores.get(billing);
      return now !== null && now !== before && now;
    }, { timeoutMs: 3 * TICK_MS, intervalMs: 10 });
    const landedAt = Date.now();
    const landed = decodeEntry(billing, landedRaw).permits.find((p) => p.acquirer === 'holder')!;
    const tick = Math.floor(landedAt / TICK_MS) * TICK_MS;
    // The node gives up on the write at its deadline (it says so once: the cluster looks unreachable), and its next
    // calls (the side job's) work: the store is reachable again, and the view, distrusted by the timeout, re-read.
    await eventually('the holder to give up on its write', () => /Cluster unreachable/.test(holder.output().slice(outputBefore)),
      { timeoutMs: 2 * DEADLINE_MS, intervalMs: 20 });
    const timedOutAt = Date.now();
    await eventually('the holder\'s calls to work again', () => /Cluster unreachable[^]*Cluster reachable again/.test(holder.output().slice(outputBefore)),
      { timeoutMs: 2_000, intervalMs: 20 });

    // An outside client removes the entry; the holder hears it (and marks the entry lost) over its healthy links.
    const removed = recordNemesis(historyFile, 'remove', `${billing}, by an outside client, its holder's write unanswered`);
    await semaphores.delete(billing);
    await eventually('the holder to hear the removal', async () => (await marks.get(`semaphores/${billing}`)) !== null, { timeoutMs: 3_000, intervalMs: 10 });
    const heardAt = Date.now();
    // Then the late answer: the acknowledgements flow again, and the client completes the write as landed.
    cluster.proxy(backup).heal({ pid: holder.pid });
    const answered = recordNemesis(historyFile, 'late-answer', 'holder');
    // Else the holder's next tick came before the late answer, and this run proves nothing of it.
    expect(answered.at).toBeLessThan(tick + TICK_MS - 100);

    // A node that never saw the entry starts: it must wait out the holder's permit, the late-landed refresh included.
    nodes.push(await startWorkloadNode({ ...common, name: 'newcomer', jobs: [billingJob] }));
    const newGrant = await eventually('a run on a new permit', () => starts().find((e) => e.at > removed.at && e.token > landed.fencingToken),
      { timeoutMs: DURATION_MS + 2 * SKEW_MS + 3 * TICK_MS + 10_000, intervalMs: 50 });
    await Promise.all(nodes.splice(0).map((n) => n.terminate()));
    recordNemesis(historyFile, 'end');

    const history = events();
    const { violations, stats } = checkHistory(history, { permits: 1 });
    const onRemoved = history.filter((e): e is StartEvent | EffectEvent =>
      (e.type === 'start' || e.type === 'effect') && e.semaphore === billing && e.token <= landed.fencingToken);
    const lastOnRemoved = onRemoved.at(-1);
    const lastBefore = starts().filter((e) => e.at <= removed.at).at(-1)!;
    process.stdout.write(`late write then removal (permit ${DURATION_MS} ms, deadline ${DEADLINE_MS} ms): write landed at +${landedAt - tick} ms `
      + `of its tick, node gave up at +${timedOutAt - tick} ms, removed at +${removed.at - tick} ms, heard by +${heardAt - tick} ms, `
      + `late answer at +${answered.at - tick} ms (next tick +${TICK_MS}); last act on the removed permit ${lastOnRemoved ? relative(lastOnRemoved.at - removed.at) : '-'} `
      + `the removal; new permit run by ${newGrant.node} ${newGrant.at - removed.at} ms after the removal (the late write's permit expired `
      + `${landed.expiresAt - removed.at} ms after it); ${stats.runsPerSemaphore[billing]} runs of it (${stats.runs} with the side job), max overlap ${stats.maxOverlapMs} ms, ${violations.length} violations\n`);

    // At most one valid lease at any instant.
    expect(violations).toEqual([]);
    // Nothing acted on the removed entry's permit once its holder had heard of the removal: the late answer put nothing back.
    expect(onRemoved.filter((e) => e.at >= heardAt).map((e) => `${e.type} by ${e.node} on token ${e.token}, ${e.at - removed.at} ms after the removal`)).toEqual([]);
    // Nobody was granted the permit before the holder's lease, the late-landed refresh's included, could have lapsed.
    expect(newGrant.at).toBeGreaterThanOrEqual(lastBefore.validUntil);
    expect(newGrant.at).toBeGreaterThanOrEqual(landed.expiresAt + SKEW_MS);
  });
});

const relative = (ms: number) => (ms < 0 ? `${-ms} ms before` : `${ms} ms after`);

/** The first `${prefix}<n>` that `fits`. */
function firstName(prefix: string, fits: (name: string) => boolean): string {
  for (let i = 0; i < 10_000; i++) if (fits(`${prefix}${i}`)) return `${prefix}${i}`;
  throw new Error(`no name ${prefix}<n> fits`);
}
