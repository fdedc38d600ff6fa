import { Client } from 'hazelcast-client';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { Clock, Permit } from '../../lib';
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

  it('keeps tokens growing across a reset, and across a rebuild by a node with a slower clock that never saw the entry', async () => {
    const mapPrefix = uniquePrefix('reset-skew');
    const fast: Clock = { now: () => Date.now() + 400 };
    const slow: Clock = { now: () => Date.now() - 400 };
    const f = await store(mapPrefix, fast);
    await new SemaphoreAdmin(f, fast, { clockSkewMs: 500 }).put({ name: 'job', duration: '1s' }, { force: true }); // a 1 s permit with a 500 ms bound, on purpose
    const creator = new PermitEngine(f, { acquirer: 'fast', group: 'g', instance: 'fast' }, fast, { clockSkewMs: 500 });
    const tokens: number[] = [];
    for (let i = 0; i < 20; i++) {
      const granted = await creator.tryAcquire('job');
      if (!granted.granted) throw new Error(granted.message);
      tokens.push(granted.permit.fencingToken);
      if (i < 19) await creator.release(granted.permit); // the last one stays held through the reset
    }
    // A reset of a readable entry revokes the live permit and keeps the revisions.
    const s = await store(mapPrefix, slow);
    await new SemaphoreAdmin(s, slow, { clockSkewMs: 500 }).resetPermits('job');
    const taker = new PermitEngine(s, { acquirer: 'slow', group: 'g', instance: 'slow' }, slow, { clockSkewMs: 500 });
    const after = await eventually('the revoked holder to let go', async () => {
      const r = await taker.tryAcquire('job');
      return r.granted && r.permit;
    });
    expect(after.fencingToken).toBeGreaterThan(Math.max(...tokens));
    tokens.push(after.fencingToken);
    // An unreadable entry, rebuilt by a node that never saw it (nothing remembered) and whose clock is slower:
    // nothing is granted during the wait, and the first grant after it is above every earlier token.
    const raw = await Client.newHazelcastClient(testClientConfig());
    await (await raw.getMap<string, string>(`${mapPrefix}.semaphores`)).set('job', 'scribbled');
    await raw.shutdown();
    const stranger = await store(mapPrefix, slow);
    await new SemaphoreAdmin(stranger, slow, { clockSkewMs: 500 }).resetPermits('job', { definition: validateDefinition({ name: 'job', duration: '1s' }) });
    const late = new PermitEngine(stranger, { acquirer: 'late', group: 'g', instance: 'late' }, slow, { clockSkewMs: 500 });
    expect(await late.tryAcquire('job')).toMatchObject({ granted: false, reason: 'RECOVERING' });
    const rebuilt = await eventually('the recovery wait to pass', async () => {
      const r = await late.tryAcquire('job');
      return r.granted && r.permit;
    }, { timeoutMs: 15_000, intervalMs: 100 });
    expect(rebuilt.fencingToken).toBeGreaterThan(Math.max(...tokens));
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
    await eventually('a node to hold billing', async () => (await both(), ledger.length > 0));
    const firstToken = ledger[0].token!;
    await operator.resetPermits('billing');
    const resetAt = Date.now();
    // From the reset on, nobody runs on the old token once a run on a new token has begun (either node may win).
    const newer = await eventually('a run on a new token', async () => {
      await both();
      const first = ledger.findIndex((e) => e.token! > firstToken);
      return first >= 0 && first + 1;
    }, { timeoutMs: 15_000, intervalMs: 50 });
    for (let i = 0; i < 5; i++) await both();
    const stale = ledger.slice(newer).filter((e) => e.token === firstToken);
    expect(stale).toEqual([]);
    expect(new Set(ledger.slice(newer - 1).map((e) => e.token)).size).toBe(1);
    process.stdout.write(`reset by a slower clock: a new token ran ${Date.now() - resetAt} ms after the reset; 0 runs on the old token after it\n`);
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
