import { allocationSemaphore, type AllocationPlan } from '../../lib/allocation/allocation';
import { readAnnex, writeAnnex } from '../../lib/allocation/allocation-annex.codec';
import { amendHoldings, nextLookInMs, reconcile } from '../../lib/allocation/allocation-holdings.rules';
import { coordinatorOf, participantsOf, slotsOf } from '../../lib/allocation/allocation-slots.rules';
import { decidePlan, evenTargets, manualSlice } from '../../lib/allocation/allocation-plan.rules';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { Holder, Permit } from '../../lib/permits/permit';
import { decideAcquire, decideRelease } from '../../lib/permits/permit.rules';
import { seedRevision, type SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { decodeEntry, encodeEntry } from '../../lib/permits/semaphore-entry.codec';

const T0 = 1_700_000_000_000;
const LEASE = 10_000;
const DELAY = 1_000;
const SKEW = 100;
const name = allocationSemaphore('queues');
const def = (over: Partial<Parameters<typeof validateDefinition>[0]> = {}) =>
  validateDefinition({ name, permits: 1000, duration: LEASE, ...over });
const node = (acquirer: string, group = 'production', instance = `${acquirer}/1`): Holder => ({ acquirer, group, instance });
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `q${String(i + from).padStart(4, '0')}`);

/** A tiny cluster: one entry, written the way the engine writes (revision + 1, or a grant's token). */
class Cluster {
  entry: SemaphoreEntry = { revision: seedRevision(T0), writeId: '', definition: def(), lastToken: 0, permits: [] };
  now = T0;
  readonly tokens = new Map<string, number>();

  join(who: Holder): Permit {
    const d = decideAcquire(this.entry, who, this.now, SKEW);
    if (d.outcome === 'denied') throw new Error(d.message);
    this.entry = { ...this.entry, ...d.next, revision: d.next.revision ?? this.entry.revision + 1 };
    this.tokens.set(who.instance, d.permit.fencingToken);
    return d.permit;
  }

  /** A graceful stop: gives everything up, then releases with a reservation of `reserveMs`. */
  leave(who: Holder, reserveMs = 0): void {
    const token = this.tokens.get(who.instance)!;
    const d = decideRelease(this.entry, who, token, this.now, this.now + reserveMs, SKEW);
    if (d.next) this.entry = { ...this.entry, ...d.next, revision: this.entry.revision + 1 };
    this.tokens.delete(who.instance);
  }

  /** The coordinator writes a plan if one is due. */
  plan(resources: readonly string[]): AllocationPlan | undefined {
    const coordinator = coordinatorOf(this.entry, this.now, SKEW);
    if (!coordinator) return undefined;
    const decision = decidePlan({ entry: this.entry, resources, now: this.now, skewMs: SKEW, delayMs: DELAY, by: coordinator.acquirer });
    if (!decision.plan) return undefined;
    const annex = readAnnex(this.entry.annex);
    this.entry = { ...this.entry, revision: this.entry.revision + 1, annex: writeAnnex({ ...annex, plan: decision.plan }) };
    return decision.plan;
  }

  /** One node follows the plan: gives up what it should (its revoke is done), takes what is free. */
  step(who: Holder): { claimed: string[]; released: string[] } {
    const token = this.tokens.get(who.instance);
    if (token === undefined) return { claimed: [], released: [] };
    const r = reconcile(this.entry, who, token, this.now, SKEW);
    if (!r.claim.length && !r.revoke.length) return { claimed: [], released: [] };
    const revision = this.entry.revision + 1;
    const live = this.entry.permits.filter((p) => p.expiresAt > this.now - SKEW);
    const change = amendHoldings(live, who, token, { claim: r.claim, release: r.revoke }, revision);
    // A resource moves to this node only from nobody, or from its own name's reservation: never from a live owner.
    for (const id of change.claimed) {
      const from = live.find((p) => p.fencingToken !== token && id in (p.resources ?? {}));
      if (from && !(from.released && from.acquirer === who.acquirer)) throw new Error(`${who.acquirer} took ${id} from live ${from.acquirer}`);
    }
    this.entry = { ...this.entry, revision, permits: change.permits };
    return change;
  }

  /** Every node steps until nothing changes; returns how many resources were claimed from another node. */
  settle(nodes: readonly Holder[]): number {
    let changed = true;
    let rounds = 0;
    while (changed && rounds++ < 20) {
      changed = false;
      for (const n of nodes) {
        const { claimed, released } = this.step(n);
        if (claimed.length || released.length) changed = true;
        this.assertNoDoubleOwner();
      }
    }
    return rounds;
  }

  shares(): Record<string, number> {
    return Object.fromEntries(participantsOf(this.entry, this.now, SKEW).map((p) => [p.acquirer, Object.keys(p.resources ?? {}).length]));
  }

  owners(): Map<string, string> {
    const owners = new Map<string, string>();
    for (const p of this.entry.permits.filter((x) => x.expiresAt > this.now - SKEW)) for (const id of Object.keys(p.resources ?? {})) owners.set(id, p.acquirer);
    return owners;
  }

  assertNoDoubleOwner(): void {
    const seen = new Set<string>();
    for (const p of this.entry.permits.filter((x) => x.expiresAt > this.now - SKEW)) {
      for (const id of Object.keys(p.resources ?? {})) {
        if (seen.has(id)) throw new Error(`${id} listed twice`);
        seen.add(id);
      }
    }
  }
}

describe('allocation rules', () => {
  it('spreads evenly with skew at most one, the larger shares to those that already hold that many', () => {
    const slot = (n: string, token: number, held: string[]) => ({ name: n, token, holdings: new Map(held.map((id, i) => [id, i])) });
    const { targets, moved } = evenTargets([slot('a', 1, ids(60)), slot('b', 2, ids(40, 60)), slot('c', 3, [])], ids(100));
    expect(Object.values(targets).map((t) => t.length).sort()).toEqual([33, 33, 34]);
    expect(targets.a.length).toBe(34); // a holds more than ⌈100/3⌉, so it keeps the larger share
    expect(moved).toBe(60 - 34 + 40 - 33);
    expect(new Set(Object.values(targets).flat()).size).toBe(100);
  });

  it('keeps the oldest resources of a slot and moves its newest', () => {
    const holdings = new Map([['x', 30], ['y', 10], ['z', 20]]);
    const { targets } = evenTargets([{ name: 'a', token: 1, holdings }, { name: 'b', token: 2, holdings: new Map() }], ['x', 'y', 'z']);
    expect(targets.a).toEqual(['y', 'z']);
    expect(targets.b).toEqual(['x']);
  });

  it('converges to 33/33/34, then a join moves exactly 25 and ends 25 × 4, and a leave moves only the leaver’s', () => {
    const c = new Cluster();
    const [a, b, d, e] = ['app-1', 'app-2', 'app-3', 'app-4'].map((n) => node(n));
    for (const n of [a, b, d]) c.join(n);
    expect(c.plan(ids(100))).toBeUndefined(); // nobody has taken part for the rebalance delay yet
    c.now += DELAY;
    expect(c.plan(ids(100))).toMatchObject({ generation: 1, reason: 'initial', moved: 0 });
    c.settle([a, b, d]);
    expect(Object.values(c.shares()).sort()).toEqual([33, 33, 34]);

    const before = c.owners();
    c.join(e);
    expect(c.plan(ids(100))).toBeUndefined(); // the joiner waits out the delay
    c.now += DELAY;
    expect(c.plan(ids(100))).toMatchObject({ generation: 2, reason: 'joined', detail: 'joined: app-4', moved: 25 });
    c.settle([a, b, d, e]);
    expect(c.shares()).toEqual({ 'app-1': 25, 'app-2': 25, 'app-3': 25, 'app-4': 25 });
    const afterJoin = c.owners();
    expect([...afterJoin].filter(([id, owner]) => before.get(id) !== owner).length).toBe(25);

    // app-2 crashes: its permit lapses (lease + skew), and only its 25 move.
    c.now += LEASE / 2;
    for (const n of [a, d, e]) c.join(n); // the others renew (decideAcquire refreshes a held permit)
    c.now += LEASE / 2 + SKEW + 1;
    expect(c.plan(ids(100))).toMatchObject({ reason: 'left', detail: 'left: app-2', moved: 25 });
    c.settle([a, d, e]);
    expect(Object.values(c.shares()).sort()).toEqual([33, 33, 34]);
    const moved = [...c.owners()].filter(([id, owner]) => afterJoin.get(id) !== owner);
    expect(moved.length).toBe(25);
    expect(moved.every(([id]) => afterJoin.get(id) === 'app-2')).toBe(true);
  });

  it('damps joins: a rolling start is one rebalance once the newest joiner waited the delay, at most twice the delay past the first', () => {
    const c = new Cluster();
    const nodes = ['a', 'b', 'd'].map((n) => node(n));
    for (const n of nodes) {
      c.join(n);
      c.now += DELAY * 0.3;
      for (const m of nodes) if (c.tokens.has(m.instance)) c.join(m);
      expect(c.plan(ids(9))).toBeUndefined();
    }
    c.now += DELAY * 0.7; // the last joined DELAY * 0.7 + 0.3 ago
    expect(c.plan(ids(9))).toMatchObject({ generation: 1, reason: 'initial', detail: 'joined: a, b, d; resources: +9 -0', moved: 0 });
    // A storm of joins every half delay: planned anyway twice the delay after the first of them became due.
    c.settle(nodes);
    const storm: Holder[] = [];
    for (let i = 0; i < 8; i++) {
      const n = node(`s${i}`);
      storm.push(n);
      c.join(n);
      const plan = c.plan(ids(9));
      if (plan) {
        expect(plan).toMatchObject({ reason: 'joined' });
        expect(i).toBeGreaterThanOrEqual(5); // the first joiner is due a delay after it joined, planned within three
        return;
      }
      c.now += DELAY / 2;
      for (const m of [...nodes, ...storm]) c.join(m);
    }
    throw new Error('a storm of joins was never planned');
  });

  it('rebalances a changed resource set with skew at most one and minimal movement', () => {
    const c = new Cluster();
    const nodes = ['a', 'b', 'd'].map((n) => node(n));
    nodes.forEach((n) => c.join(n));
    c.now += DELAY;
    c.plan(ids(100));
    c.settle(nodes);
    const before = c.owners();
    const next = [...ids(100).slice(5), ...ids(10, 100)]; // 5 removed, 10 added: 105
    expect(c.plan(next)).toMatchObject({ reason: 'resources-changed', detail: 'resources: +10 -5' });
    c.settle(nodes);
    expect(Object.values(c.shares()).sort()).toEqual([35, 35, 35]);
    const kept = [...c.owners()].filter(([id, owner]) => before.get(id) === owner).length;
    expect(kept).toBe(95); // nothing that stayed in the set changed hands
  });

  it('never writes a plan on top of one still in flight, unless a slot left', () => {
    const c = new Cluster();
    const [a, b, d] = ['a', 'b', 'd'].map((n) => node(n));
    c.join(a);
    c.now += DELAY;
    c.plan(ids(9));
    c.settle([a]);
    c.join(b);
    c.now += DELAY;
    expect(c.plan(ids(9))).toMatchObject({ reason: 'joined', moved: 4 });
    c.join(d);
    c.now += DELAY;
    // a has not given up its 4 yet: the join of d waits for that rebalance to finish.
    expect(decidePlan({ entry: c.entry, resources: ids(9), now: c.now, skewMs: SKEW, delayMs: DELAY, by: 'a' })).toMatchObject({ waiting: 'in-flight' });
    c.settle([a, b]);
    expect(c.plan(ids(9))).toMatchObject({ reason: 'joined', detail: 'joined: d' });
    c.settle([a, b, d]);
    expect(Object.values(c.shares())).toEqual([3, 3, 3]);
  });

  it('a resource still listed by a live permit is never claimed by another, whatever the plan says', () => {
    const c = new Cluster();
    const [a, b] = [node('a'), node('b')];
    c.join(a);
    c.join(b);
    c.now += DELAY;
    c.plan(['r1', 'r2']);
    c.settle([a, b]);
    // b asks for a's resource directly (a stale plan, a bug): the write does not give it.
    const owned = Object.keys(c.entry.permits.find((p) => p.acquirer === 'a')!.resources!);
    const change = amendHoldings(c.entry.permits, b, c.tokens.get(b.instance)!, { claim: owned }, c.entry.revision + 1);
    expect(change).toMatchObject({ claimed: [], blocked: owned });
  });

  it('gives each claimed resource the write’s revision as its epoch, growing with every new owner', () => {
    const c = new Cluster();
    const [a, b] = [node('a'), node('b')];
    c.join(a);
    c.now += DELAY;
    c.plan(['r1', 'r2']);
    c.settle([a]);
    const first = c.entry.permits.find((p) => p.acquirer === 'a')!.resources!.r2;
    expect(first).toBe(c.entry.revision);
    c.join(b);
    c.now += DELAY;
    c.plan(['r1', 'r2']);
    c.settle([a, b]);
    const second = c.entry.permits.find((p) => p.acquirer === 'b')!.resources!.r2;
    expect(second).toBeGreaterThan(first);
  });

  it('a node that stops gracefully and comes back within the delay moves nothing; after it, its share moves', () => {
    const c = new Cluster();
    const [a, b, d] = ['a', 'b', 'd'].map((n) => node(n));
    [a, b, d].forEach((n) => c.join(n));
    c.now += DELAY;
    c.plan(ids(30));
    c.settle([a, b, d]);
    const before = c.owners();
    c.leave(b, DELAY); // gave everything up (onRevoked ran), keeps it reserved for its name
    expect(slotsOf(c.entry, c.now, SKEW).find((s) => s.name === 'b')).toMatchObject({ reserved: true });
    expect(c.plan(ids(30))).toBeUndefined(); // the reservation keeps b's slot: nothing is due
    c.settle([a, d]);
    const restarted = node('b', 'production', 'b/2');
    c.now += DELAY / 2;
    c.join(restarted);
    c.settle([a, restarted, d]);
    expect(c.owners()).toEqual(before);
    expect(c.plan(ids(30))).toBeUndefined();

    // Now it stops for good: after its reservation lapses, its ten move to the others.
    c.leave(restarted, DELAY);
    c.now += DELAY + SKEW + 1;
    expect(c.plan(ids(30))).toMatchObject({ reason: 'left', detail: 'left: b' });
    c.settle([a, d]);
    expect(c.shares()).toEqual({ a: 15, d: 15 });
  });

  it('a younger instance under a taken name holds nothing; it inherits once the older one lapses', () => {
    const c = new Cluster();
    const a1 = node('a', 'production', 'a/1');
    const a2 = node('a', 'production', 'a/2');
    c.join(a1);
    c.now += DELAY;
    c.plan(ids(4));
    c.settle([a1]);
    c.join(a2);
    expect(reconcile(c.entry, a2, c.tokens.get(a2.instance)!, c.now, SKEW)).toMatchObject({ claim: [], revoke: [] });
    c.now += LEASE + SKEW + 1; // a/1 crashed long ago; a/2 renews
    c.tokens.delete(a1.instance);
    c.join(a2);
    expect(c.plan(ids(4))).toBeUndefined(); // same slot, same plan: nothing moves to another name
    c.settle([a2]);
    expect(c.shares()).toEqual({ a: 4 });
  });

  it('a paused or excluded allocation has no participants, and its nodes give everything up', () => {
    const c = new Cluster();
    const a = node('a');
    c.join(a);
    c.now += DELAY;
    c.plan(ids(3));
    c.settle([a]);
    c.entry = { ...c.entry, definition: def({ groupPattern: 'dr-site' }) };
    expect(participantsOf(c.entry, c.now, SKEW)).toEqual([]);
    expect(reconcile(c.entry, a, c.tokens.get(a.instance)!, c.now, SKEW)).toMatchObject({ revoke: ids(3), claim: [] });
    c.entry = { ...c.entry, definition: def({ permits: 0 }) };
    expect(participantsOf(c.entry, c.now, SKEW)).toEqual([]);
  });

  it('answers a rebalance request once', () => {
    const c = new Cluster();
    const a = node('a');
    c.join(a);
    c.now += DELAY;
    c.plan(ids(3));
    c.settle([a]);
    c.entry = { ...c.entry, annex: writeAnnex({ ...readAnnex(c.entry.annex), requests: 1 }) };
    expect(c.plan(ids(3))).toMatchObject({ reason: 'requested', answered: 1, moved: 0 });
    expect(c.plan(ids(3))).toBeUndefined();
  });

  it('never takes a resource from a live owner, and ends even, through random joins, crashes, graceful stops and set changes', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let run = 0; run < 20; run++) {
      const c = new Cluster();
      const alive: Holder[] = [];
      let count = 0;
      let set = ids(50);
      for (let step = 0; step < 40; step++) {
        const roll = random();
        if (roll < 0.35 || alive.length === 0) {
          const joiner = node(`n${count}`, 'production', `n${count++}/1`);
          c.join(joiner);
          alive.push(joiner);
        } else if (roll < 0.5) alive.splice(Math.floor(random() * alive.length), 1); // crash: it just stops
        else if (roll < 0.6) {
          const [gone] = alive.splice(Math.floor(random() * alive.length), 1);
          c.step(gone);
          c.leave(gone, DELAY);
        } else if (roll < 0.7) set = ids(40 + Math.floor(random() * 30), Math.floor(random() * 20));
        c.now += Math.floor(random() * 2 * DELAY);
        for (const n of alive) c.join(n);
        c.plan(set);
        c.settle(alive);
      }
      c.now += LEASE + SKEW + 1; // every crashed node's permit and every reservation has lapsed
      for (const n of alive) c.join(n);
      c.now += DELAY; // and every joiner has waited out the delay
      for (const n of alive) c.join(n);
      for (let i = 0; i < 4; i++) {
        c.plan(set);
        c.settle(alive);
      }
      const shares = Object.values(c.shares());
      expect(shares.reduce((x, y) => x + y, 0)).toBe(new Set(set).size);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }
  });

  it('looks again within a renewal, right after the next lapse, the plan\'s own change or the end of a stand-back', () => {
    const c = new Cluster();
    const a = c.join(node('a'));
    const renewal = Math.floor(LEASE / 3);
    // Nothing due sooner: one renewal interval, heard or not.
    expect(nextLookInMs(c.entry, T0, SKEW, undefined, 0)).toBe(renewal);
    // A permit lapsing for every node (expiry plus skew) before that: right after it.
    const lapseIn = a.expiresAt + SKEW - T0;
    expect(nextLookInMs(c.entry, a.expiresAt + SKEW - 500, SKEW, undefined, 0)).toBe(501);
    expect(lapseIn).toBeGreaterThan(renewal);
    // The plan changing by itself, and the end of a stand-back, each when sooner; never under 10 ms.
    expect(nextLookInMs(c.entry, T0, SKEW, T0 + 2_000, 0)).toBe(2_001);
    expect(nextLookInMs(c.entry, T0, SKEW, undefined, 700)).toBe(701);
    expect(nextLookInMs(c.entry, T0, SKEW, T0 - 50, 0)).toBe(10);
    // A view that knows no definition yet takes a 10 s lease.
    expect(nextLookInMs(undefined, T0, SKEW, undefined, 0)).toBe(Math.floor(10_000 / 3));
  });

  it('slices the sorted set for manual mode so that N nodes cover it exactly once', () => {
    for (const n of [1, 3, 7, 100, 101]) {
      const set = ids(n).reverse();
      for (const count of [1, 2, 3, 8]) {
        const slices = Array.from({ length: count }, (_, i) => manualSlice(set, count, i));
        expect(slices.flat().sort()).toEqual(ids(n));
        const sizes = slices.map((s) => s.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('keeps resources and the annex through the codec, as format 3; plain entries stay format 2', () => {
    const c = new Cluster();
    c.join(node('a'));
    c.now += DELAY;
    c.plan(['r1']);
    c.settle([node('a')]);
    const raw = encodeEntry(c.entry);
    expect(JSON.parse(raw).v).toBe(3);
    expect(decodeEntry(name, raw)).toEqual(c.entry);
    const plain: SemaphoreEntry = { ...c.entry, annex: undefined, permits: [] };
    delete (plain as { annex?: unknown }).annex;
    expect(JSON.parse(encodeEntry(plain)).v).toBe(2);
    expect(() => decodeEntry(name, raw.replace('"r1":', '"r1":"x","r0":'))).toThrow(/permit #0 is malformed/);
  });
});
