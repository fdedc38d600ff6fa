import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryBackend } from '../../lib/testing';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import { validateDefinition } from '../../lib/permits/definition.validator';
import { allocationSemaphore } from '../../lib/allocation/allocation';
import { AllocationParticipant } from '../../lib/allocation/allocation-participant';
import { allocationPermitsOf } from '../../lib/allocation/allocation-permits';
import { eventually } from '../support/eventually';

/**
 * Participants of one allocation on memory stores sharing a backend (nodes in one process), through the same
 * engine, leases and view the module uses. Every node records when its work got and gave up each resource; the
 * checks read only that record: even shares, minimal movement, and no resource in two nodes' hands at once.
 */
describe('AllocationParticipant', () => {
  const semaphore = allocationSemaphore('queues');
  const SKEW = 20;
  const DELAY = 150;
  let backend: MemoryBackend;
  let set: string[];
  const cleanup: Array<() => Promise<void>> = [];
  /** resource → [node, from, to?] in the order they happened. */
  let history: Map<string, Array<{ node: string; from: number; to?: number }>>;
  /** When the first onRevoked of the test began. */
  let revokeStartedAt: number | undefined;

  beforeEach(() => {
    backend = new MemoryBackend();
    set = Array.from({ length: 100 }, (_, i) => `q${String(i).padStart(3, '0')}`);
    history = new Map();
    revokeStartedAt = undefined;
  });
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  interface Node {
    name: string;
    participant: AllocationParticipant;
    owned: Set<string>;
  }

  async function node(name: string, { group = 'g', revokeMs = 0, instance = `${name}/1` } = {}): Promise<Node> {
    const store = new PermitRecordStore(backend.node());
    await store.connect({ clock: systemClock });
    const engine = new PermitEngine(store, { acquirer: name, group, instance }, systemClock, { clockSkewMs: SKEW });
    const owned = new Set<string>();
    const participant = new AllocationParticipant('queues', { acquirer: name, group, instance }, allocationPermitsOf(engine, store), {
      resources: () => set,
      onAssigned: (resources) => {
        for (const id of resources) {
          const spans = history.get(id) ?? [];
          history.set(id, [...spans, { node: name, from: performance.now() }]);
          owned.add(id);
        }
      },
      onRevoked: async (resources) => {
        revokeStartedAt ??= performance.now();
        if (revokeMs) await sleep(revokeMs);
        for (const id of resources) {
          const span = [...history.get(id)!].reverse().find((s) => s.node === name);
          span!.to = performance.now();
          owned.delete(id);
        }
      },
    }, { clock: systemClock, clockSkewMs: SKEW, delayMs: DELAY, resourcesIntervalMs: 100 });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await participant.stop();
      engine.dispose();
      await store.close();
    };
    cleanup.push(stop);
    return { name, participant, owned };
  }

  async function define(leaseMs: number, groupPattern = '.*'): Promise<SemaphoreAdmin> {
    const store = new PermitRecordStore(backend.node());
    await store.connect({ clock: systemClock });
    cleanup.push(() => store.close());
    const admin = new SemaphoreAdmin(store, systemClock);
    await admin.define(validateDefinition({ name: semaphore, permits: 1000, duration: leaseMs, groupPattern }));
    return admin;
  }

  const shares = (nodes: Node[]) => nodes.map((n) => n.owned.size);
  const even = (nodes: Node[], total = set.length) => {
    const s = shares(nodes);
    return s.reduce((a, b) => a + b, 0) === total && Math.max(...s) - Math.min(...s) <= 1;
  };
  const snapshot = (nodes: Node[]) => new Map(nodes.flatMap((n) => [...n.owned].map((id) => [id, n.name] as const)));

  /** No resource was in two nodes' hands at once: each span began after the previous one ended. */
  function assertNoOverlap(): void {
    for (const [id, spans] of history) {
      for (let i = 1; i < spans.length; i++) {
        const before = spans[i - 1];
        if (before.to === undefined || before.to > spans[i].from) {
          throw new Error(`${id}: ${spans[i].node} got it at ${spans[i].from.toFixed(1)} while ${before.node} held it (until ${before.to?.toFixed(1) ?? 'still'})`);
        }
      }
    }
  }

  it('spreads 100 over 3 as 33/33/34; a 4th moves exactly 25 and ends 25 × 4; a graceful stop moves only its 25', async () => {
    await define(600);
    const nodes = [await node('a'), await node('b'), await node('c')];
    nodes.forEach((n) => n.participant.start());
    await eventually('33/33/34', () => even(nodes));
    expect(shares(nodes).sort()).toEqual([33, 33, 34]);

    const before = snapshot(nodes);
    const d = await node('d');
    d.participant.start();
    const four = [...nodes, d];
    await eventually('25 × 4', () => shares(four).every((s) => s === 25));
    const afterJoin = snapshot(four);
    expect([...afterJoin].filter(([id, owner]) => before.get(id) !== owner)).toHaveLength(25);

    await nodes[1].participant.stop(); // b: its resources stay reserved for "b" for the delay, then move
    const three = [nodes[0], nodes[2], d];
    await eventually('even over three again', () => even(three));
    const moved = [...snapshot(three)].filter(([id, owner]) => afterJoin.get(id) !== owner);
    expect(moved).toHaveLength(25);
    expect(moved.every(([id]) => afterJoin.get(id) === 'b')).toBe(true);
    assertNoOverlap();
  });

  it('a node restarted within the rebalance delay gets its own resources back and nothing else moves', async () => {
    await define(600);
    const nodes = [await node('a'), await node('b'), await node('c')];
    nodes.forEach((n) => n.participant.start());
    await eventually('even', () => even(nodes));
    const before = snapshot(nodes);
    await nodes[1].participant.stop();
    const again = await node('b', { instance: 'b/2' });
    again.participant.start();
    const after = [nodes[0], again, nodes[2]];
    await eventually('b back', () => even(after));
    expect(snapshot(after)).toEqual(before);
    assertNoOverlap();
  });

  it('a resource moves only after its old owner’s slow onRevoked returned (1.5 s)', async () => {
    await define(2_000);
    const a = await node('a', { revokeMs: 1_500 });
    a.participant.start();
    await eventually('a has all', () => a.owned.size === 100);
    const b = await node('b');
    b.participant.start();
    await eventually('50/50', () => even([a, b]));
    assertNoOverlap(); // b's spans begin after a's revokes (each 400 ms) ended
    const handedOver = [...history.values()].filter((spans) => spans.length === 2);
    expect(handedOver).toHaveLength(50);
    for (const [first, second] of handedOver) expect(second.from - first.to!).toBeGreaterThanOrEqual(0);
    // The whole revoke took its 1.5 s before b started any of them.
    const firstStart = Math.min(...handedOver.map(([, second]) => second.from));
    expect(firstStart - Math.min(...handedOver.map(([first]) => first.to!))).toBeGreaterThanOrEqual(0);
    expect(firstStart - revokeStartedAt!).toBeGreaterThanOrEqual(1_500);
  });

  it('follows a changed resource set, and a resourcesChanged() on any node, with skew at most one', async () => {
    await define(600);
    const nodes = [await node('a'), await node('b'), await node('c')];
    nodes.forEach((n) => n.participant.start());
    await eventually('even', () => even(nodes));
    set = [...set.slice(5), ...Array.from({ length: 10 }, (_, i) => `n${i}`)];
    await nodes[2].participant.resourcesChanged(); // c is not the coordinator: it asks for a rebalance
    await eventually('even over 105', () => even(nodes, 105) && nodes.every((n) => [...n.owned].every((id) => set.includes(id))));
    assertNoOverlap();
  });

  it('an operator’s force-release of a node’s part is told to its work before its resources move', async () => {
    const admin = await define(600);
    const nodes = [await node('a', { revokeMs: 200 }), await node('b')];
    nodes.forEach((n) => n.participant.start());
    await eventually('even', () => even(nodes));
    const token = nodes[0].participant.lease!.token;
    await admin.forceRelease(semaphore, token);
    await eventually('a rejoined and even again', () => nodes[0].participant.lease !== undefined && nodes[0].participant.lease.token !== token && even(nodes));
    assertNoOverlap();
  });

  it('a live group edit moves every resource to the nodes it admits, and back', async () => {
    const admin = await define(600, 'blue');
    const blue = await node('a', { group: 'blue', revokeMs: 200 });
    const green = await node('b', { group: 'green' });
    [blue, green].forEach((n) => n.participant.start());
    await eventually('all on blue', () => blue.owned.size === 100);
    expect(green.owned.size).toBe(0);
    await admin.update(semaphore, { groupPattern: 'green' });
    await eventually('all on green', () => green.owned.size === 100 && blue.owned.size === 0);
    await admin.update(semaphore, { groupPattern: 'blue|green' });
    await eventually('shared', () => even([blue, green]));
    assertNoOverlap();
  });
});
