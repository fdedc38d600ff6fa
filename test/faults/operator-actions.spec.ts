import { setTimeout as sleep } from 'node:timers/promises';
import { HazelcastPermitStore, PermitEngine, SemaphoreAdmin, systemClock, type Clock, type Permit } from '../../lib';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

/**
 * Operator actions against running nodes on a real member: concurrent edits, resets from nodes whose clocks
 * disagree (within the bound), and the tokens handed out around them.
 */
describe('operator actions under concurrency and skewed clocks', () => {
  const stores: HazelcastPermitStore[] = [];
  const nodes: TestNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  async function store(mapPrefix: string, clock: Clock = systemClock): Promise<HazelcastPermitStore> {
    const made = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix });
    stores.push(made);
    await made.connect({ clock });
    return made;
  }

  it('applies every one of 200 concurrent pause + migrate pairs (each edit is a compare-and-set)', async () => {
    const mapPrefix = uniquePrefix('edits');
    const [a, b] = [await store(mapPrefix), await store(mapPrefix)];
    const adminA = new SemaphoreAdmin(a, systemClock);
    const adminB = new SemaphoreAdmin(b, systemClock);
    const names = Array.from({ length: 200 }, (_, i) => `job-${i}`);
    await Promise.all(names.map((name) => adminA.put({ name, duration: '1m', permits: 2, groupPattern: 'production' })));
    // Each pair races on one entry: a pause from one node, a move to dr-site from the other.
    const outcomes = await Promise.allSettled(names.flatMap((name) => [adminA.pause(name), adminB.update(name, { groupPattern: 'dr-site' })]));
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    const final = await adminA.permits();
    const lost = names.filter((name) => {
      const d = final.find((s) => s.name === name)?.definition;
      return !(d?.permits === 0 && d.pausedFrom === 2 && d.groupPattern === 'dr-site');
    });
    expect(lost).toEqual([]);
  });

  it('keeps tokens growing across a reset made by a node whose clock is slower than the creator\'s', async () => {
    const mapPrefix = uniquePrefix('reset-skew');
    const fast: Clock = { now: () => Date.now() + 400 };
    const slow: Clock = { now: () => Date.now() - 400 };
    const [f, s] = [await store(mapPrefix, fast), await store(mapPrefix, slow)];
    await new SemaphoreAdmin(f, fast, { clockSkewMs: 500 }).put({ name: 'job', duration: '1s' });
    const creator = new PermitEngine(f, { acquirer: 'fast', group: 'g', instance: 'fast' }, fast, { clockSkewMs: 500 });
    const tokens: number[] = [];
    for (let i = 0; i < 20; i++) {
      const granted = await creator.tryAcquire('job');
      if (!granted.granted) throw new Error(granted.message);
      tokens.push(granted.permit.fencingToken);
      await creator.release(granted.permit);
    }
    await new SemaphoreAdmin(s, slow, { clockSkewMs: 500 }).resetPermits('job');
    const after = await new PermitEngine(s, { acquirer: 'slow', group: 'g', instance: 'slow' }, slow, { clockSkewMs: 500 }).tryAcquire('job');
    expect(after).toMatchObject({ granted: true });
    expect(after.granted && after.permit.fencingToken).toBeGreaterThan(Math.max(...tokens));
  });

  it('reaches a holder that answers from its view when a slower-clocked operator resets, before anyone else is granted', async () => {
    const mapPrefix = uniquePrefix('reset-view');
    const ledger: LedgerEntry[] = [];
    const definitions = [{ name: 'billing', duration: '4s' }];
    const holder = await startNode({ identity: { acquirer: 'holder' }, mapPrefix, ledger, definitions });
    const other = await startNode({ identity: { acquirer: 'other' }, mapPrefix, ledger, definitions });
    nodes.push(holder, other);
    const slow: Clock = { now: () => Date.now() - 400 };
    const operator = new SemaphoreAdmin(await store(mapPrefix, slow), slow, { clockSkewMs: 500 });
    let tick = 0;
    const both = () => Promise.all([holder, other].map((n) => n.get(TickJobs).billing(tick))).then(() => tick++);
    await eventually('the holder to hold billing', async () => (await both(), ledger.some((e) => e.acquirer === 'holder')));
    const firstToken = ledger.find((e) => e.acquirer === 'holder')!.token!;
    await operator.resetPermits('billing');
    const resetAt = Date.now();
    // From the reset on, the holder must not run on its old token while the other node runs on a new one.
    await eventually('the other node to run billing', async () => (await both(), ledger.some((e) => e.acquirer === 'other')), { timeoutMs: 15_000, intervalMs: 100 });
    const overlap = ledger.filter((e) => e.acquirer === 'holder' && e.token === firstToken && ledger.indexOf(e) > ledger.findIndex((o) => o.acquirer === 'other'));
    expect(overlap).toEqual([]);
    const otherToken = ledger.find((e) => e.acquirer === 'other')!.token!;
    expect(otherToken).toBeGreaterThan(firstToken);
    process.stdout.write(`reset by a slower clock: other node ran ${Date.now() - resetAt} ms after the reset, old holder ran 0 ticks after it\n`);
    await sleep(0);
  });

  it('reports a force-release to the running job, whose node lets go before the other is granted', async () => {
    const mapPrefix = uniquePrefix('force');
    const a = await store(mapPrefix);
    const b = await store(mapPrefix);
    await new SemaphoreAdmin(a, systemClock).put({ name: 'job', duration: '10s' });
    const holder = new PermitEngine(a, { acquirer: 'a', group: 'g', instance: 'a' }, systemClock);
    const taker = new PermitEngine(b, { acquirer: 'b', group: 'g', instance: 'b' }, systemClock);
    const held = (await holder.tryAcquire('job')) as { permit: Permit };
    let toldAt = 0;
    holder.watch(held.permit, () => (toldAt = Date.now()));
    const releasedAt = Date.now();
    expect(await new SemaphoreAdmin(b, systemClock).forceRelease('job', held.permit.fencingToken)).toBe(true);
    const granted = await eventually('the other node to be granted', async () => {
      const r = await taker.tryAcquire('job');
      return r.granted && Date.now();
    });
    expect(toldAt).toBeGreaterThan(0);
    expect(toldAt).toBeLessThanOrEqual(granted);
    process.stdout.write(`force-release: holder told ${toldAt - releasedAt} ms after it, other node granted ${granted - releasedAt} ms after it\n`);
  });
});
