import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AllocationService, GatekeeperService, InvalidInputError } from '../../lib';
import type { AllocationLease } from '../../lib/allocation/allocation-lease';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { uniquePrefix } from '../support/test-cluster';
import { eventually } from '../support/eventually';

/** Every hand-over, as the nodes' handlers saw it: resource → spans of ownership, in order. */
const spans = new Map<string, Array<{ node: string; from: number; to?: number; epoch: number }>>();
let resourceSet: string[] = [];

/** A provider as users write one: consumers of the queues this node is given. */
@Injectable()
class QueueConsumers implements OnModuleInit {
  readonly owned = new Set<string>();

  constructor(
    private readonly allocations: AllocationService,
    private readonly gatekeeper: GatekeeperService,
  ) {}

  onModuleInit(): void {
    const me = this.gatekeeper.identity.acquirer;
    this.allocations.participate('queues', {
      resources: () => resourceSet,
      onAssigned: (ids: string[], lease: AllocationLease) => {
        for (const id of ids) {
          spans.set(id, [...(spans.get(id) ?? []), { node: me, from: performance.now(), epoch: lease.epochOf(id)! }]);
          this.owned.add(id);
        }
      },
      onRevoked: async (ids: string[]) => {
        await new Promise((resolve) => setTimeout(resolve, 50)); // stopping a consumer takes a moment
        for (const id of ids) {
          [...spans.get(id)!].reverse().find((s) => s.node === me)!.to = performance.now();
          this.owned.delete(id);
        }
      },
    });
  }
}

describe('allocation through the module, on a real member (AllocationService)', () => {
  const nodes: TestNode[] = [];
  let prefix: string;
  beforeEach(() => {
    prefix = uniquePrefix('alloc');
    spans.clear();
    resourceSet = Array.from({ length: 100 }, (_, i) => `queue-${String(i).padStart(3, '0')}`);
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
  });

  async function node(acquirer: string): Promise<TestNode> {
    const started = await startNode({
      mapPrefix: prefix,
      identity: { acquirer, group: 'production' },
      membership: false,
      maxClockSkew: '50ms',
      allocations: [{ name: 'queues', lease: '2s', rebalanceDelay: '300ms' }],
      providers: [QueueConsumers],
    });
    nodes.push(started);
    return started;
  }
  const owned = (n: TestNode) => n.get(QueueConsumers).owned.size;
  const even = (list: TestNode[], total: number) => {
    const shares = list.map(owned);
    return shares.reduce((a, b) => a + b, 0) === total && Math.max(...shares) - Math.min(...shares) <= 1 && shares;
  };
  function assertNoOverlap(): void {
    for (const [id, list] of spans) {
      for (let i = 1; i < list.length; i++) {
        if (list[i - 1].to === undefined || list[i - 1].to! > list[i].from) throw new Error(`${id}: ${list[i].node} got it while ${list[i - 1].node} held it`);
        expect(list[i].epoch).toBeGreaterThan(list[i - 1].epoch); // each new owner fences with a larger epoch
      }
    }
  }

  it('spreads 100 queues 33/33/34 over three nodes, moves 25 to a fourth, and only the leaver’s on a graceful stop', async () => {
    const three = [await node('app-1'), await node('app-2'), await node('app-3')];
    expect((await eventually('33/33/34', () => even(three, 100), { timeoutMs: 15_000 })).sort()).toEqual([33, 33, 34]);
    const status = three[0].get(AllocationService).status('queues');
    // Nodes that start further apart than the rebalance delay are rebalanced one join at a time.
    expect(status).toMatchObject({ name: 'queues', resources: 100, unowned: 0, skew: 1, lastRebalance: { settled: true } });
    expect(['initial', 'joined']).toContain(status.lastRebalance!.reason);
    expect(status.owners.map((o) => o.resources.length).sort()).toEqual([33, 33, 34]);

    const four = [...three, await node('app-4')];
    await eventually('25 × 4', () => four.every((n) => owned(n) === 25), { timeoutMs: 15_000 });
    const join = four[0].get(AllocationService).status('queues').lastRebalance!;
    expect(join).toMatchObject({ reason: 'joined', detail: 'joined: app-4', moved: 25 });

    const before = new Map(four.flatMap((n) => [...n.get(QueueConsumers).owned].map((id) => [id, n] as const)));
    const leaver = four[1];
    await leaver.close();
    nodes.splice(nodes.indexOf(leaver), 1);
    const rest = four.filter((n) => n !== leaver);
    await eventually('even over three again', () => even(rest, 100), { timeoutMs: 15_000 });
    const moved = rest.flatMap((n) => [...n.get(QueueConsumers).owned].filter((id) => before.get(id) !== n));
    expect(moved).toHaveLength(25);
    expect(moved.every((id) => before.get(id) === leaver)).toBe(true);
    assertNoOverlap();
  });

  it('follows a changed resource set after resourcesChanged() on any node', async () => {
    const three = [await node('app-1'), await node('app-2'), await node('app-3')];
    await eventually('even', () => even(three, 100), { timeoutMs: 15_000 });
    resourceSet = [...resourceSet.slice(5), ...Array.from({ length: 10 }, (_, i) => `queue-new-${i}`)];
    await three[2].get(AllocationService).resourcesChanged('queues');
    await eventually('35 × 3 of the new set', () => three.every((n) => owned(n) === 35 && [...n.get(QueueConsumers).owned].every((id) => resourceSet.includes(id))), { timeoutMs: 15_000 });
    expect(three[0].get(AllocationService).status('queues').lastRebalance).toMatchObject({ reason: 'resources-changed', detail: expect.stringContaining('resources: +10 -5') });
    assertNoOverlap();
  });

  it('manual mode: the slices of three nodes cover the set exactly once, and follow a changed set', async () => {
    const three = await Promise.all([0, 1, 2].map(async (nodeIndex) => {
      const started = await startNode({
        mapPrefix: prefix,
        identity: { acquirer: `m-${nodeIndex}`, group: 'production' },
        membership: false,
        allocations: [{ name: 'queues', manual: { nodeCount: 3, nodeIndex } }],
        providers: [QueueConsumers],
      });
      nodes.push(started);
      return started;
    }));
    const all = () => three.flatMap((n) => [...n.get(QueueConsumers).owned]).sort();
    await eventually('every queue once', () => all().length === 100);
    expect(all()).toEqual([...resourceSet].sort());
    expect(three.map(owned)).toEqual([33, 33, 34]);
    expect(three[0].get(AllocationService).lease('queues')!.epochOf(three[0].get(AllocationService).owned('queues')[0])).toBe(0);
    resourceSet = resourceSet.slice(0, 90);
    await Promise.all(three.map((n) => n.get(AllocationService).resourcesChanged('queues')));
    await eventually('every remaining queue once', () => all().length === 90 && three.every((n) => owned(n) === 30));
    expect(all()).toEqual([...resourceSet].sort());
  });

  it('rejects a bad allocation option naming the field', async () => {
    await expect(startNode({ mapPrefix: prefix, allocations: [{ name: 'q', manual: { nodeCount: 2, nodeIndex: 2 } }], providers: [] })).rejects.toThrow(/allocations\[0\]\.manual\.nodeIndex/);
    await expect(startNode({ mapPrefix: prefix, allocations: [{ name: 'queues', lease: 'soon' }], providers: [] })).rejects.toThrow(InvalidInputError);
    await expect(startNode({ mapPrefix: prefix, allocations: [{ name: 'queues', lease: 'soon' }], providers: [] })).rejects.toThrow(/allocations\[0\]\.lease/);
    await expect(startNode({ mapPrefix: prefix, allocations: [{ name: 'queues', maxParticipants: -1 }], providers: [] })).rejects.toThrow(/allocations\[0\]\.maxParticipants/);
    await expect(startNode({ mapPrefix: prefix, allocations: [{ name: 'q' }, { name: 'q' }], providers: [] })).rejects.toThrow(/declared twice/);
  });
});
