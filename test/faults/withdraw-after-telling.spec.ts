import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import {
  checkHistory, ControlledCluster, gaps, readHistory, recordNemesis, startWorkloadNode,
  type HistoryEvent, type NemesisEvent, type NodeProcess, type SignalEvent, type StartEvent, type WorkloadJob,
} from '../harness';
import { eventually } from '../support/eventually';
import { declareFresh } from '../support/fresh-cluster';
import { uniquePrefix } from '../support/test-cluster';

/** The holder's link to the member is slow: news of what is taken from it arrives late. */
const SLOW_LINK_MS = 800;

/**
 * Whoever takes a permit away (a force-release, a reset, a live edit that excludes the holder) must tell the
 * holder first, or wait until its lease cannot vouch any more. The holder's process sits behind a slow link, so
 * it hears a second late: another node must still never run while the holder's job believes in its permit.
 */
describe('taking a permit from a running job whose node hears late', () => {
  let cluster: ControlledCluster;
  const nodes: NodeProcess[] = [];
  const stores: HazelcastPermitStore[] = [];
  beforeAll(async () => {
    cluster = await ControlledCluster.start(1, { proxied: true });
    await declareFresh(cluster.clientConfig());
  });
  afterEach(async () => {
    cluster.proxy(0).heal();
    // Killed, not stopped: a graceful stop would wait for the minute-long runs (shutdownTimeout).
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await cluster?.quit();
  });

  /** Two nodes on a long-running job (the first to run it is the holder), and an operator. */
  async function scene(label: string, job: Partial<WorkloadJob> = {}) {
    const historyFile = join(mkdtempSync(join(tmpdir(), `gatekeeper-${label}-`)), 'history.jsonl');
    const mapPrefix = uniquePrefix(label);
    const jobs: WorkloadJob[] = [{ semaphore: 'long', duration: '10s', intervalMs: 250, runMs: 60_000, effectEveryMs: 50, ...job }];
    const definitions = [{ name: 'long', duration: '10s', groupPattern: 'production|dr-site' }];
    const common = { historyFile, jobs, cluster, mapPrefix, maxClockSkew: '200ms', definitions };
    const starts = (node?: string) => readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start' && (!node || e.node === node));
    const pair = await Promise.all([startWorkloadNode({ ...common, name: 'node-a', group: 'production' }), startWorkloadNode({ ...common, name: 'node-b', group: 'dr-site' })]);
    nodes.push(...pair);
    const first = await eventually('a node to run', () => starts()[0], { timeoutMs: 15_000 });
    const holder = pair.find((n) => n.name === first.node)!;
    const other = pair.find((n) => n !== holder)!;
    const otherGroup = other.name === 'node-a' ? 'production' : 'dr-site';
    const store = new HazelcastPermitStore({ clientConfig: cluster.clientConfig(), mapPrefix });
    stores.push(store);
    await store.connect({ clock: systemClock });
    const admin = new SemaphoreAdmin(store, systemClock, { clockSkewMs: 200 });
    return { historyFile, holder, other, otherGroup, admin, starts, token: first.token };
  }

  /** The history's verdict, and the times from the operator's action to the holder's signal and the other's start. */
  function verdict(historyFile: string) {
    const history = readHistory(historyFile);
    const { violations, stats } = checkHistory(history, { permits: 1, startMarginMs: 2_000 });
    const isAction = (e: HistoryEvent): e is NemesisEvent => e.type === 'nemesis' && e.action === 'operator';
    const holder = history.find((e): e is StartEvent => e.type === 'start')!.node;
    const [told] = gaps(history, isAction, (e): e is SignalEvent => e.type === 'signal' && e.node === holder);
    const [taken] = gaps(history, isAction, (e): e is StartEvent => e.type === 'start' && e.node !== holder);
    return { violations, stats, toldMs: told.ms!, takenMs: taken.ms! };
  }

  it.each([
    ['a force-release', (admin: SemaphoreAdmin, token: number) => admin.forceRelease('long', token).then((found) => expect(found).toBe(true))],
    ['a reset', (admin: SemaphoreAdmin) => admin.resetPermits('long')],
    ['a live edit that moves the job to the other node\'s group', (admin: SemaphoreAdmin, _token: number, otherGroup: string) =>
      admin.update('long', { groupPattern: otherGroup }).then(() => undefined)],
  ])('%s reaches the running job before another node starts it', async (what, action) => {
    const { historyFile, holder, other, otherGroup, admin, starts, token } = await scene(what.split(' ')[1].replace(/\W/g, ''));
    cluster.proxy(0).delay(SLOW_LINK_MS, { pid: holder.pid });
    recordNemesis(historyFile, 'operator', what);
    await action(admin, token, otherGroup);
    await eventually('the other node to run the job', () => starts(other.name).length > 0, { timeoutMs: 20_000 });
    // Killed, not stopped: a graceful stop would wait for the minute-long runs (shutdownTimeout).
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    const { violations, toldMs, takenMs } = verdict(historyFile);
    expect(violations).toEqual([]);
    expect(toldMs).toBeLessThanOrEqual(takenMs);
    process.stdout.write(`withdraw after telling, ${what}, holder's link +${SLOW_LINK_MS} ms: holder's job told ${toldMs} ms after, other node started ${takenMs} ms after; 0 overlap\n`);
  });

  it('waits for the permit to lapse when the holder cannot hear at all (keepAlive off, link blackholed)', async () => {
    const { historyFile, holder, other, admin, starts, token } = await scene('deaf', { keepAlive: false });
    cluster.proxy(0).blackhole({ pid: holder.pid });
    recordNemesis(historyFile, 'operator', 'force-release, holder cut off');
    expect(await admin.forceRelease('long', token)).toBe(true);
    await eventually('the other node to run the job', () => starts(other.name).length > 0, { timeoutMs: 20_000 });
    await holder.kill(); // it cannot hear, so it cannot shut down cleanly either
    cluster.proxy(0).heal();
    // Killed, not stopped: a graceful stop would wait for the minute-long runs (shutdownTimeout).
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    const { violations, takenMs } = verdict(historyFile);
    expect(violations).toEqual([]);
    process.stdout.write(`withdraw after telling, holder cut off: other node started ${takenMs} ms after the force-release (at the 10 s permit's expiry); 0 overlap\n`);
  });
});
