import { PresenceRecordStore } from '../../lib/presence/presence-record.store';
import type { MembershipChanges, Presence } from '../../lib/presence/presence';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import type { PresenceStore } from '../../lib/presence/presence-store';
import { PresenceTracker } from '../../lib/presence/presence.tracker';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

const timing = { intervalMs: 5_000, ttlMs: 15_000, clockSkewMs: 500 };
const names = (ps: Presence[]) => ps.map((p) => p.acquirer);

/**
 * A store whose events can be cut off without telling (as a Hazelcast member's connection can): the lost-event case,
 * where only the periodic re-read its staleness policy declares tells.
 */
class DeafStore extends PresenceRecordStore {
  deaf = false;
  resyncEvery: number | undefined = timing.intervalMs;
  override get resyncEveryMs(): number | undefined {
    return this.resyncEvery;
  }
  override watch(listener: (instance: string, presence: Presence | null) => void): () => void {
    return super.watch((instance, presence) => !this.deaf && listener(instance, presence));
  }
}

describe('PresenceTracker (memory store, a clock moved by hand)', () => {
  const clock = new FakeClock();
  const backend = new MemoryBackend();
  const trackers: PresenceTracker[] = [];
  const changes: Array<{ node: string; changes: MembershipChanges }> = [];

  async function node(acquirer: string, store: PresenceStore = new PresenceRecordStore(backend.node()), instance = `${acquirer}/${trackers.length}`) {
    await store.connect();
    const tracker = new PresenceTracker(store, { instance, acquirer, group: 'production', startedAt: clock.now(), version: '0.1.0' }, clock, {
      ...timing,
      onChange: (c) => changes.push({ node: acquirer, changes: c }),
    });
    trackers.push(tracker);
    await tracker.start();
    return tracker;
  }
  afterAll(async () => {
    await Promise.all(trackers.map((t) => t.stop()));
  });

  it('sees instances join by events, drops one that stops renewing after ttl plus skew, and sees a graceful leave at once', async () => {
    const a = await node('a');
    const b = await node('b');
    expect(names(a.live())).toEqual(['a', 'b']);
    expect(changes.filter((c) => c.node === 'a').flatMap((c) => names(c.changes.joined))).toEqual(['a', 'b']);

    // c starts, then freezes: it never renews. a renews every interval.
    const c = await node('c');
    expect(names(a.live())).toEqual(['a', 'b', 'c']);
    await c.stop(); // withdraws: a hears it at once
    expect(names(a.live())).toEqual(['a', 'b']);
    expect(changes.at(-1)).toEqual({ node: expect.any(String), changes: { joined: [], left: [expect.objectContaining({ acquirer: 'c' })] } });

    // b dies without a word (its timer no longer runs): after ttl + skew it drops out of a's view at a's tick.
    Object.assign(b, { running: false });
    for (let t = 0; t < 3; t++) {
      clock.advance(timing.intervalMs);
      await a.tick();
    }
    expect(names(a.live())).toEqual(['a', 'b']); // 15 s after b's last renewal: within ttl + skew
    clock.advance(timing.intervalMs);
    await a.tick();
    expect(names(a.live())).toEqual(['a']);
  });

  it('on a feed that tells every loss, renews with one write an interval and reads again only when told', async () => {
    const store = new PresenceRecordStore(backend.node());
    const calls: string[] = [];
    for (const call of ['announce', 'list'] as const) {
      const original = store[call].bind(store) as (...args: unknown[]) => Promise<never>;
      store[call] = ((...args: unknown[]) => (calls.push(call), original(...args))) as never;
    }
    const g = await node('g', store);
    const reads = () => calls.filter((c) => c === 'list').length;
    expect(calls).toEqual(['announce', 'list']);
    for (let i = 0; i < 3; i++) {
      clock.advance(timing.intervalMs);
      await g.tick();
    }
    // Renewals only (the interval's own timer may add one): the view missed nothing.
    expect(reads()).toBe(1);
    expect(calls.length).toBeGreaterThanOrEqual(5);
    // Confirmed by each renewal: the view is trusted, the write says the cluster answers.
    expect(g.ageMs()).toBe(0);
    expect(g.confirmed()).toBeDefined();
    // The feed down: no read when told, one at each renewal while it stays down.
    backend.records.missChanges('disconnected');
    expect(reads()).toBe(1);
    await g.tick();
    await g.tick();
    expect(reads()).toBe(3);
    // Back: read once at once, then renewals only again.
    backend.records.missChanges('reconnected');
    await eventually('the re-read after the reconnect', () => reads() === 4);
    await g.tick();
    expect(reads()).toBe(4);
  });

  it('learns of a join it never heard about within one interval, from the re-read', async () => {
    const deaf = new DeafStore(backend);
    const d = await node('d', deaf);
    deaf.deaf = true;
    await node('e');
    expect(names(d.live())).not.toContain('e');
    clock.advance(timing.intervalMs);
    await d.tick();
    expect(names(d.live())).toContain('e');
    expect(d.ageMs()).toBe(0);
  });

  it('on a feed that can lose events without telling, reads again at the renewal nearest each resync', async () => {
    const store = new DeafStore(backend);
    store.resyncEvery = 5 * timing.intervalMs;
    let reads = 0;
    const list = store.list.bind(store);
    store.list = (...args) => (reads++, list(...args));
    const h = await node('h', store);
    const at: number[] = [];
    for (let i = 1; i <= 10; i++) {
      clock.advance(timing.intervalMs);
      const before = reads;
      await h.tick();
      if (reads > before) at.push(i);
    }
    expect(at).toEqual([5, 10]);
  });

  it('reports two live instances with one acquirer name', async () => {
    const f1 = await node('f', new PresenceRecordStore(backend.node()), 'f/one');
    await node('f', new PresenceRecordStore(backend.node()), 'f/two');
    expect([...f1.clashes()].map(([name, ps]) => [name, ps.map((p) => p.instance)])).toEqual([['f', ['f/one', 'f/two']]]);
  });
});
