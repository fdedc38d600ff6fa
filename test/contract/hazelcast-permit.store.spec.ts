import { randomUUID } from 'node:crypto';
import { systemClock } from '../../lib/core/clock';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { HazelcastPermitStore } from '../../lib/cli/hazelcast-permit.store';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { encodeEntry } from '../../lib/permits/semaphore-entry.codec';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';
import { imapOf, watchedOf } from '../support/permit-records';

describe('against a real Hazelcast member', () => {
  const raw = useRawClient();

  // The permit store's contract runs on Hazelcast with every other store's: test/contract/hazelcast-backend.spec.ts.
  it("is not sent its own writes back (it takes them from their answers), and still hears the others' writes and every removal", async () => {
    const mapPrefix = uniquePrefix('own-writes');
    const [a, b] = [0, 1].map(() => new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix }));
    await Promise.all([a, b].map((store) => store.connect({ clock: systemClock })));
    try {
      // What each store's listeners were sent, and what each store wrote.
      const sent = new Map<HazelcastPermitStore, string[]>([[a, []], [b, []]]);
      const wrote = new Map<HazelcastPermitStore, string[]>([[a, []], [b, []]]);
      for (const store of [a, b]) {
        const spied = watchedOf(store);
        const heard = spied.heard.bind(spied);
        spied.heard = (name, raw) => (sent.get(store)!.push(raw), heard(name, raw));
        const map = imapOf(store);
        const [putIfAbsent, replaceIfSame] = [map.putIfAbsent.bind(map), map.replaceIfSame.bind(map)];
        map.putIfAbsent = ((key: string, value: string) => (wrote.get(store)!.push(value), putIfAbsent(key, value))) as typeof map.putIfAbsent;
        map.replaceIfSame = ((key: string, expected: string, next: string) => (wrote.get(store)!.push(next), replaceIfSame(key, expected, next))) as typeof map.replaceIfSame;
      }
      await new SemaphoreAdmin(a, systemClock).put({ name: 'billing', duration: '10s', permits: 2 });
      const one = new PermitEngine(a, { acquirer: 'a', group: 'production', instance: 'a/1' }, systemClock);
      const granted = await one.tryAcquire('billing');
      expect(await one.tryAcquire('billing')).toMatchObject({ granted: true, outcome: 'refreshed' });
      expect(granted.granted).toBe(true);
      // Each view holds the entry as written, the writer's from its answers.
      expect(a.peek('billing')?.raw).toBe(wrote.get(a)!.at(-1));
      await eventually("b's view has a's last write", () => b.peek('billing')?.raw === wrote.get(a)!.at(-1));
      const two = new PermitEngine(b, { acquirer: 'b', group: 'production', instance: 'b/1' }, systemClock);
      expect(await two.tryAcquire('billing')).toMatchObject({ granted: true, outcome: 'granted' });
      // The events of one entry come in order: once a has heard b's write, any of its own would have come before.
      await eventually("a's view has b's write", () => a.peek('billing')?.raw === wrote.get(b)!.at(-1));
      expect(wrote.get(a)).toHaveLength(3);
      expect(sent.get(a)).toEqual(wrote.get(b));
      expect(sent.get(b)).toEqual(wrote.get(a));
      // Values written without a store's mark (an earlier version, an operator's reset) come to every node: the
      // members' regex takes none of them for a's or b's.
      const map = await raw().getMap<string, string>(`${mapPrefix}.semaphores`);
      const unmarked = [randomUUID(), ''].map((writeId, i) => encodeEntry({ ...a.peek('billing')!.entry!, revision: a.peek('billing')!.entry!.revision + 1 + i, writeId }));
      for (const value of unmarked) await map.set('billing', value);
      await eventually('both views have the unmarked writes', () => a.peek('billing')?.raw === unmarked[1] && b.peek('billing')?.raw === unmarked[1]);
      expect(sent.get(a)).toEqual([...wrote.get(b)!, ...unmarked]);
      expect(sent.get(b)).toEqual([...wrote.get(a)!, ...unmarked]);
      // Removals come to every node, whoever wrote the entry last (a for reports), and so do evictions.
      await new SemaphoreAdmin(a, systemClock).put({ name: 'reports', duration: '10s' });
      await new SemaphoreAdmin(a, systemClock).put({ name: 'audit', duration: '10s' });
      await eventually("b's view has audit", () => b.peek('audit')?.raw === wrote.get(a)!.at(-1));
      await map.remove('billing');
      await map.remove('reports');
      await map.evict('audit');
      for (const [store, name] of [a, b].flatMap((store) => ['billing', 'reports', 'audit'].map((name) => [store, name] as const))) {
        await eventually(`${store === a ? 'a' : 'b'} heard ${name} gone`, () => store.peek(name)?.raw === null);
      }
    } finally {
      await Promise.all([a, b].map((store) => store.close()));
    }
  });

  it('records a write of its own whose answer comes after its deadline, when it comes (no event will)', async () => {
    const store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix: uniquePrefix('late-answer') });
    await store.connect({ clock: systemClock });
    try {
      await new SemaphoreAdmin(store, systemClock).put({ name: 'billing', duration: '10s' });
      const before = await store.read('billing');
      // The write reaches the member only after the call's deadline, as one the client retries during a migration.
      const map = imapOf(store);
      const replaceIfSame = map.replaceIfSame.bind(map);
      let landed = false;
      map.replaceIfSame = (async (key: string, expected: string, next: string) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        landed = await replaceIfSame(key, expected, next);
        return landed;
      }) as typeof map.replaceIfSame;
      const next = { ...before.entry!, revision: before.entry!.revision + 1, writeId: store.writeId() };
      await expect(store.compareAndSet('billing', before, next, { timeoutMs: 50 })).rejects.toThrow(StoreTimeoutError);
      expect(store.peek('billing')?.raw).toBe(before.raw);
      await eventually('the late write landed and is in the view', () => landed && store.peek('billing')?.raw === encodeEntry(next));
    } finally {
      await store.close();
    }
  });

  it('reads an entry again when a removal is heard while its view holds a write of its own (the removal may be of the value before)', async () => {
    const store = new HazelcastPermitStore({ clientConfig: testClientConfig(), mapPrefix: uniquePrefix('removal-race') });
    await store.connect({ clock: systemClock });
    try {
      await new SemaphoreAdmin(store, systemClock).put({ name: 'billing', duration: '10s' });
      const own = store.peek('billing')!.raw;
      // A removal of the entry before this write, its event come after the write's answer (events and answers travel apart).
      const calls = store.operationCount();
      watchedOf(store).removed('billing');
      expect(store.peek('billing')?.raw).toBe(own);
      await eventually('the entry read again', () => store.operationCount() > calls);
    } finally {
      await store.close();
    }
  });

  it('leaves an injected client running when it closes', async () => {
    const store = new HazelcastPermitStore({ client: raw(), mapPrefix: uniquePrefix('injected') });
    await store.connect({ clock: systemClock });
    await store.close();
    expect(raw().getLifecycleService().isRunning()).toBe(true);
  });
});
