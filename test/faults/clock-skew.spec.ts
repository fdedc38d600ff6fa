import { setTimeout as sleep } from 'node:timers/promises';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { PermitLease, type Clock, type Permit } from '../../lib';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

/**
 * Two nodes whose clocks are 400 ms slow and 400 ms fast. The holder stops refreshing; the other node polls for
 * the permit. Overlap is measured in real time: from the other node's grant until the holder's lease stops
 * vouching for the permit. With the bound (500 ms) there is none; without it (0) the test sees the overlap.
 */
describe('skewed clocks', () => {
  const stores: HazelcastPermitStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  async function race(boundMs: number): Promise<{ holderValidUntilReal: number; grantedNoEarlierThan: number; grantedBy: number }> {
    const mapPrefix = uniquePrefix('skew');
    const slow: Clock = { now: () => Date.now() - 400 };
    const fast: Clock = { now: () => Date.now() + 400 };
    const [a, b] = [new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix }), new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix })];
    stores.push(a, b);
    await Promise.all([a.connect({ clock: slow }), b.connect({ clock: fast })]);
    await new SemaphoreAdmin(a, slow).put({ name: 'skewed', duration: 1500 });
    await eventually('the other node to see the definition', () => b.peek('skewed')?.entry);
    const holder = new PermitEngine(a, { acquirer: 'slow-node', group: 'g', instance: 'slow' }, slow, { clockSkewMs: boundMs });
    const taker = new PermitEngine(b, { acquirer: 'fast-node', group: 'g', instance: 'fast' }, fast, { clockSkewMs: boundMs });
    const granted = await holder.tryAcquire('skewed');
    if (!granted.granted) throw new Error(granted.message);
    const lease = new PermitLease(granted.permit as Permit, async () => ({ granted: false, semaphore: 'skewed', reason: 'STORE_UNAVAILABLE', message: 'holder stopped refreshing' }), () => () => undefined, slow, { keepAlive: false, clockSkewMs: boundMs });
    // The holder's lease vouches while slow.now() < validUntil, i.e. until this real time:
    const holderValidUntilReal = lease.validUntil + 400;
    lease.end();
    for (;;) {
      const before = Date.now();
      if ((await taker.tryAcquire('skewed')).granted) return { holderValidUntilReal, grantedNoEarlierThan: before, grantedBy: Date.now() };
      await sleep(10); // polling the other node, as its ticks would
    }
  }

  it('never lets the other node hold the permit while the holder still believes in it, with the bound', async () => {
    const { holderValidUntilReal, grantedNoEarlierThan } = await race(500);
    expect(grantedNoEarlierThan).toBeGreaterThanOrEqual(holderValidUntilReal);
    process.stdout.write(`clock skew ±400 ms, bound 500 ms: gap ${grantedNoEarlierThan - holderValidUntilReal} ms between holder's lease end and takeover\n`);
  });

  it('shows the overlap the bound prevents when it is set to 0', async () => {
    const { holderValidUntilReal, grantedBy } = await race(0);
    expect(grantedBy).toBeLessThan(holderValidUntilReal - 500);
    process.stdout.write(`clock skew ±400 ms, bound 0: overlap of at least ${holderValidUntilReal - grantedBy} ms\n`);
  });
});
