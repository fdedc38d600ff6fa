import { setTimeout as sleep } from 'node:timers/promises';
import { DenyReason } from '../../lib';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

/**
 * Two Nest application contexts in one process, each with its own Hazelcast client and identity, against the
 * real member. Ticks are driven by the test (both nodes get tick i, concurrently), so "once per tick" is exact.
 */
describe('@ClusterSingleton across two nodes on a real member', () => {
  let ledger: LedgerEntry[];
  let nodes: TestNode[];
  let mapPrefix: string;

  beforeEach(() => {
    ledger = [];
    nodes = [];
    mapPrefix = uniquePrefix('singleton');
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  async function node(acquirer: string, group = 'production', extra: Parameters<typeof startNode>[0] = {}) {
    const started = await startNode({ identity: { acquirer, group }, ledger, mapPrefix, ...extra });
    nodes.push(started);
    return started;
  }

  /** Gives every node tick `i` of `job` at the same time, as a cron schedule would. */
  async function tick(job: 'billing' | 'reports' | 'export', i: number, on: TestNode[] = nodes) {
    await Promise.all(on.map((n) => n.get(TickJobs)[job](i)));
  }
  const runsOf = (job: string, i: number) => ledger.filter((e) => e.job === job && e.tick === i).map((e) => e.acquirer);
  /** Keeps giving `on` ticks after `from` until `acquirer` runs `job`, for the milliseconds an event takes. */
  const tickUntilRuns = async (job: 'billing', from: number, acquirer: string, on?: TestNode[]) => {
    let i = from;
    await eventually(`${acquirer} to take over`, async () => runsOf(job, i).includes(acquirer) || (await tick(job, ++i, on), false), { timeoutMs: 2000 });
  };

  it('runs a singleton on exactly one node per tick, and the holder keeps it', async () => {
    await node('node-a');
    await node('node-b');
    for (let i = 0; i < 10; i++) await tick('billing', i);
    const perTick = [...Array(10).keys()].map((i) => runsOf('billing', i));
    expect(perTick.every((runs) => runs.length === 1)).toBe(true);
    expect(new Set(perTick.flat()).size).toBe(1);
    expect(new Set(ledger.map((e) => e.token)).size).toBe(1);
  });

  it('lets both nodes run a semaphore with permits: 2', async () => {
    const definitions = [{ name: 'reports', duration: '3s', permits: 2 }];
    await node('node-a', 'production', { definitions });
    await node('node-b', 'production', { definitions });
    for (let i = 0; i < 5; i++) await tick('reports', i);
    for (let i = 0; i < 5; i++) expect(runsOf('reports', i).sort()).toEqual(['node-a', 'node-b']);
  });

  it('runs only where the group and acquirer patterns allow', async () => {
    const definitions = [
      { name: 'billing', duration: '3s', groupPattern: 'dr-.*' },
      { name: 'reports', duration: '3s', permits: 5, acquirerPattern: 'node-(a|c)' },
    ];
    await node('node-a', 'production', { definitions });
    await node('node-b', 'dr-site', { definitions });
    await node('node-c', 'production', { definitions });
    for (let i = 0; i < 3; i++) await tick('billing', i);
    for (let i = 0; i < 3; i++) await tick('reports', i);
    for (let i = 0; i < 3; i++) expect(runsOf('billing', i)).toEqual(['node-b']);
    for (let i = 0; i < 3; i++) expect(runsOf('reports', i).sort()).toEqual(['node-a', 'node-c']);
    const denied = await nodes[0].gatekeeper.tryAcquire('billing');
    expect(denied).toMatchObject({ granted: false, reason: DenyReason.GROUP_MISMATCH });
  });

  it('hands the job over once the holder stops refreshing and its permit expires', async () => {
    const definitions = [{ name: 'billing', duration: '1s' }];
    const a = await node('node-a', 'production', { definitions });
    const b = await node('node-b', 'production', { definitions });
    await tick('billing', 0, [a]);
    const held = a.gatekeeper.heldPermits()[0];
    expect(held.acquirer).toBe('node-a');
    // node-a stops ticking (as if stuck or gone); node-b keeps ticking.
    let i = 1;
    await eventually('node-b to take over', async () => {
      await tick('billing', i++, [b]);
      return runsOf('billing', i - 1).includes('node-b');
    }, { timeoutMs: 5000, intervalMs: 100 });
    const takeover = b.gatekeeper.heldPermits()[0];
    expect(takeover.grantedAt).toBeGreaterThanOrEqual(held.expiresAt);
    expect(takeover.fencingToken).toBeGreaterThan(held.fencingToken);
  });

  it('moves the job at the holder\'s next refresh when a live edit excludes it', async () => {
    const definitions = [{ name: 'billing', duration: '30s' }];
    const a = await node('node-a', 'production', { definitions });
    const b = await node('node-b', 'dr-site', { definitions });
    await tick('billing', 0, [a]);
    await tick('billing', 0, [b]);
    expect(runsOf('billing', 0)).toEqual(['node-a']);
    await b.semaphores.updateDefinition('billing', { groupPattern: 'dr-site' });
    await eventually('node-a to see the edit', () => a.semaphores.getDefinition('billing')?.groupPattern === 'dr-site');
    // The holder's next tick refreshes, is refused and withdraws its permit; node-b, which denies from its
    // event-fed view, is granted once the withdrawal reaches it: within one tick, not after the 30 s permit.
    await tick('billing', 1, [a]);
    await tick('billing', 1, [b]);
    expect(runsOf('billing', 1)).not.toContain('node-a');
    await tickUntilRuns('billing', 1, 'node-b');
    // Seconds before the 30 s permit would have expired; node-a never ran again; never two runners on one tick.
    expect(ledger.filter((e) => e.acquirer === 'node-a').map((e) => e.tick)).toEqual([0]);
    expect(ledger.filter((e) => e.acquirer === 'node-b').every((e) => runsOf('billing', e.tick as number).length === 1)).toBe(true);
    // Nest's static logger goes to the last app's logger when two apps share a process: read them all.
    const lost = nodes.flatMap((n) => n.logger.find('log', /no longer runs on this node: GROUP_MISMATCH .*semaphore "billing"/));
    expect(lost).toHaveLength(1);
  });

  it('pauses a job everywhere with permits: 0 and resumes it', async () => {
    const a = await node('node-a');
    await node('node-b');
    await tick('billing', 0);
    await a.semaphores.updateDefinition('billing', { permits: 0 });
    await eventually('both nodes to see the pause', () => nodes.every((n) => n.semaphores.getDefinition('billing')?.permits === 0));
    await tick('billing', 1);
    expect(runsOf('billing', 1)).toEqual([]);
    await a.semaphores.updateDefinition('billing', { permits: 1 });
    await eventually('both nodes to see the resume', () => nodes.every((n) => n.semaphores.getDefinition('billing')?.permits === 1));
    await tick('billing', 2);
    expect(runsOf('billing', 2)).toHaveLength(1);
  });

  it('releases permits on shutdown so the other node takes over on its next tick', async () => {
    const definitions = [{ name: 'billing', duration: '60s' }];
    const a = await node('node-a', 'production', { definitions });
    const b = await node('node-b', 'production', { definitions });
    await tick('billing', 0, [a]);
    await tick('billing', 0, [b]);
    expect(runsOf('billing', 0)).toEqual(['node-a']);
    await a.close();
    // node-b learns of the release by event (milliseconds), long before the 60 s permit would expire.
    await tickUntilRuns('billing', 1, 'node-b', [b]);
    expect(b.gatekeeper.heldPermits()[0]?.acquirer).toBe('node-b');
  });

  it('release mode frees the permit after the run, but not before lockAtLeastFor', async () => {
    const a = await node('node-a');
    const b = await node('node-b');
    await tick('export', 0, [a]);
    await tick('export', 0, [b]);
    expect(runsOf('export', 0)).toEqual(['node-a']);
    const released = (await a.semaphores.permits()).find((s) => s.name === 'export')!;
    expect(released.permits).toHaveLength(1);
    expect(released.permits[0].expiresAt - released.permits[0].refreshedAt).toBeLessThanOrEqual(1500);
    expect(a.gatekeeper.heldPermits()).toEqual([]);
    // Other nodes honour the permit until its expiry plus the clock-skew bound (500 ms by default).
    await sleep(released.permits[0].expiresAt + 500 - Date.now() + 20);
    await tick('export', 1, [b]);
    expect(runsOf('export', 1)).toEqual(['node-b']);
  });
});
