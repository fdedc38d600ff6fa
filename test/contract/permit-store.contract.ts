import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { DenyReason } from '../../lib/permits/deny-reason';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { Permit } from '../../lib/permits/permit';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import type { PermitStore } from '../../lib/permits/permit-store';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

/** Two stores over the same data (two "nodes"), and a way to plant values the library did not write. */
export interface ContractFixture {
  stores: [PermitStore, PermitStore];
  writeRaw(key: string, value: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The behaviour every PermitStore must have, run against each implementation. Store-level compare-and-set
 * first, then the engine and the operator's edits on top of the store, as nodes use them.
 */
export function describePermitStoreContract(name: string, createFixture: () => Promise<ContractFixture>): void {
  describe(`PermitStore contract: ${name}`, () => {
    let fixture: ContractFixture;
    let a: PermitStore;
    let b: PermitStore;
    const clock = new FakeClock();
    const corrupt: string[] = [];
    const context = { clock, events: { corruptValue: (key: string) => void corrupt.push(key) } };
    const billing = validateDefinition({ name: 'billing', duration: '10s' });
    const entry = (revision: number): SemaphoreEntry => ({ revision, writeId: `w${revision}`, definition: billing, lastToken: 0, permits: [] });

    beforeEach(async () => {
      corrupt.length = 0;
      fixture = await createFixture();
      [a, b] = fixture.stores;
      await a.connect(context);
      await b.connect(context);
    });

    afterEach(async () => {
      await a.close();
      await b.close();
      await fixture.close();
    });

    describe('compare-and-set of entries', () => {
      it('reads nothing for a semaphore never written', async () => {
        expect(await a.read('billing')).toEqual({ entry: undefined, raw: null });
      });

      it('creates only once', async () => {
        expect(await a.compareAndSet('billing', { raw: null }, entry(1))).toBe(true);
        expect(await b.compareAndSet('billing', { raw: null }, entry(1))).toBe(false);
        expect((await b.read('billing')).entry).toEqual(entry(1));
      });

      it('replaces only what it read', async () => {
        await a.compareAndSet('billing', { raw: null }, entry(1));
        const readByA = await a.read('billing');
        const readByB = await b.read('billing');
        expect(await b.compareAndSet('billing', readByB, entry(2))).toBe(true);
        expect(await a.compareAndSet('billing', readByA, entry(3))).toBe(false);
        expect((await a.read('billing')).entry?.revision).toBe(2);
      });

      it("keeps a node's own write in its view exactly as the other nodes decode it", async () => {
        // The writer does not decode what it wrote again: what it keeps must be what a read of the value gives.
        const held = { ...entry(1), permits: [{ semaphore: 'billing', acquirer: 'n', group: 'g', instance: 'n/1', fencingToken: 1, grantedAt: 1, refreshedAt: 1, expiresAt: 9 }] };
        await a.compareAndSet('billing', { raw: null }, held);
        await a.compareAndSet('billing', await a.read('billing'), { ...held, revision: 2, writeId: 'w2' });
        const read = await b.read('billing');
        expect(a.peek('billing')).toMatchObject({ raw: read.raw });
        expect(a.peek('billing')!.entry).toStrictEqual(read.entry);
      });

      it('tells the other node of every write, newest revision wins in its view', async () => {
        const seen: number[] = [];
        const unwatch = b.watch((name, e) => name === 'billing' && e && seen.push(e.revision));
        await a.compareAndSet('billing', { raw: null }, entry(1));
        await a.compareAndSet('billing', await a.read('billing'), entry(2));
        await eventually('b to see revision 2', () => b.peek('billing')?.entry?.revision === 2);
        expect(seen).toContain(2);
        expect(b.known().map((k) => k.name)).toEqual(['billing']);
        expect(b.peek('billing')!.ageMs).toBeLessThan(5_000);
        unwatch();
      });

      it('lists entries, skipping and reporting unreadable ones, whose raw value stays readable', async () => {
        await a.compareAndSet('billing', { raw: null }, entry(1));
        await fixture.writeRaw('junk', 'not json');
        expect((await a.list()).map((s) => s.name)).toEqual(['billing']);
        expect(corrupt).toContain('junk');
        await expect(a.read('junk')).rejects.toThrow(/"junk"/);
        expect(await b.readRaw('junk')).toBe('not json');
      });
    });

    describe('the gatekeeper on this store', () => {
      let adminA: SemaphoreAdmin;
      let adminB: SemaphoreAdmin;
      const engine = (store: PermitStore, acquirer: string, group = 'production', instance = `${acquirer}/1`) =>
        new PermitEngine(store, { acquirer, group, instance }, clock);

      beforeEach(async () => {
        adminA = new SemaphoreAdmin(a, clock);
        adminB = new SemaphoreAdmin(b, clock);
        await adminA.put({ name: 'billing', duration: '10s' });
        await adminA.put({ name: 'reports', duration: '10s', permits: 2 });
        await eventually('b to know both definitions', () => adminB.list().length === 2);
      });

      it('grants once, refreshes the holder, denies the other node', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = await one.tryAcquire('billing');
        expect(first).toMatchObject({ granted: true, outcome: 'granted' });
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
        clock.advance(5_000);
        const again = await one.tryAcquire('billing');
        expect(again).toMatchObject({ granted: true, outcome: 'refreshed' });
        expect(again.granted && first.granted && again.permit.fencingToken).toBe(first.granted && first.permit.fencingToken);
      });

      it('gives a second instance with the same acquirer name no share of the permit', async () => {
        expect(await engine(a, 'app', 'production', 'app/one').tryAcquire('billing')).toMatchObject({ granted: true });
        expect(await engine(b, 'app', 'production', 'app/two').tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
      });

      it('hands over after expiry with a larger fencing token; the old holder cannot refresh or release it', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        clock.advance(10_000);
        const second = await two.tryAcquire('billing');
        expect(second).toMatchObject({ granted: true, outcome: 'granted' });
        const secondPermit = (second as { permit: Permit }).permit;
        expect(secondPermit.fencingToken).toBeGreaterThan(first.permit.fencingToken);
        expect(await one.refresh(first.permit)).toMatchObject({ granted: false, reason: DenyReason.PERMIT_LOST });
        expect(await one.release(first.permit)).toBe('not-held');
        const status = await adminB.permits();
        expect(status.find((s) => s.name === 'billing')?.permits.map((p) => p.acquirer)).toEqual(['node-2']);
      });

      it('releases so the other node is granted at once; a second release finds nothing', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        expect(await one.release(first.permit)).toBe('released');
        expect(await one.release(first.permit)).toBe('not-held');
        expect(one.heldPermits()).toEqual([]);
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: true });
      });

      it('says since when nobody held it on a fresh grant: never held, after a release, after an expiry', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = await one.tryAcquire('billing');
        expect(first).toMatchObject({ granted: true, outcome: 'granted' });
        expect(first).not.toHaveProperty('vacantSince'); // never held: nothing was missed
        clock.advance(5_000);
        expect(await one.tryAcquire('billing')).not.toHaveProperty('vacantSince'); // a refresh says nothing
        const releasedAt = clock.now();
        expect(await one.release((first as { permit: Permit }).permit)).toBe('released');
        clock.advance(20_000);
        // The other node reads the removal from the store: it is vacant since the release, not since the expiry.
        const second = await two.tryAcquire('billing');
        expect(second).toMatchObject({ granted: true, outcome: 'granted', vacantSince: releasedAt });
        const expiresAt = (second as { permit: Permit }).permit.expiresAt;
        clock.advance(30_000);
        expect(await one.tryAcquire('billing')).toMatchObject({ granted: true, outcome: 'granted', vacantSince: expiresAt });
      });

      it('says nothing on a fresh grant while another permit is live', async () => {
        expect(await engine(a, 'node-1').tryAcquire('reports')).toMatchObject({ granted: true, outcome: 'granted' });
        const second = await engine(b, 'node-2').tryAcquire('reports');
        expect(second).toMatchObject({ granted: true, outcome: 'granted' });
        expect(second).not.toHaveProperty('vacantSince');
      });

      it('keeps a released permit until lockAtLeastFor has passed and never refreshes it', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        expect(await one.release(first.permit, clock.now() + 3_000)).toBe('shortened');
        clock.advance(2_999);
        expect(await one.tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: false });
        clock.advance(1);
        const next = await one.tryAcquire('billing');
        expect(next).toMatchObject({ granted: true, outcome: 'granted' });
        expect(next.granted && next.permit.fencingToken).toBeGreaterThan(first.permit.fencingToken);
      });

      it('tells the holder of a force-release on another node before its slot is freed', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const held = (await one.tryAcquire('billing')) as { permit: Permit };
        const told: string[] = [];
        one.watch(held.permit, (reason) => told.push(reason));
        expect(await adminB.forceRelease('billing', held.permit.fencingToken)).toBe(true);
        // The holder lets go right after telling its work; only then is the other node granted.
        await eventually('the slot to be freed', async () => (await two.tryAcquire('billing')).granted);
        expect(told).toHaveLength(1);
        expect(told[0]).toContain('PERMIT_REVOKED');
      });

      it('keeps a revoked permit\'s slot taken until it expires when its holder cannot be told', async () => {
        const one = engine(a, 'node-1');
        const held = (await one.tryAcquire('billing')) as { permit: Permit };
        one.dispose(); // a holder that hears nothing (frozen, cut off)
        expect(await adminB.forceRelease('billing', held.permit.fencingToken)).toBe(true);
        const two = engine(b, 'node-2');
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
        clock.advance(10_000);
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: true });
      });

      it('denies with CORRUPT_STATE on a value it did not write, until an operator resets it, and tokens still grow', async () => {
        const first = (await engine(a, 'node-1').tryAcquire('billing')) as { permit: Permit };
        await fixture.writeRaw('billing', '{"hand":"written"}');
        expect(await engine(a, 'node-1').tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.CORRUPT_STATE });
        await adminA.resetPermits('billing');
        // A rebuilt entry waits out every permit the unreadable one could have held.
        expect(await engine(b, 'node-2').tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.RECOVERING });
        clock.advance(10_000);
        const after = await engine(b, 'node-2').tryAcquire('billing');
        expect(after).toMatchObject({ granted: true });
        expect(after.granted && after.permit.fencingToken).toBeGreaterThan(first.permit.fencingToken);
      });

      it('applies every one of many concurrent edits from two nodes (none is lost)', async () => {
        const names = Array.from({ length: 20 }, (_, i) => `job-${i}`);
        for (const n of names) await adminA.put({ name: n, duration: '10s', groupPattern: 'production' });
        await Promise.all(names.flatMap((n) => [adminA.pause(n), adminB.migrate('production', 'dr-site')]));
        const final = await adminA.permits();
        for (const n of names) expect(final.find((s) => s.name === n)?.definition).toMatchObject({ permits: 0, pausedFrom: 1, groupPattern: 'dr-site' });
      });

      it('never grants more permits than defined under concurrent requests, and tokens only grow', async () => {
        const engines = [0, 1, 2, 3, 4, 5].map((i) => engine(i % 2 ? b : a, `node-${i}`));
        const tokens: number[] = [];
        for (let round = 0; round < 8; round++) {
          const results = await Promise.all(engines.map((e) => e.tryAcquire('reports')));
          const grants = results.flatMap((r) => (r.granted ? [r.permit] : []));
          expect(grants).toHaveLength(2);
          for (const r of results) if (!r.granted) expect(r.reason).toBe(DenyReason.NO_PERMIT_AVAILABLE);
          const roundTokens = grants.map((p) => p.fencingToken).sort((x, y) => x - y);
          if (tokens.length) expect(roundTokens[0]).toBeGreaterThan(tokens[tokens.length - 1]);
          tokens.push(...roundTokens);
          for (const permit of grants) {
            const holder = engines.find((e) => e.holder.acquirer === permit.acquirer)!;
            expect(await holder.release(permit)).toBe('released');
          }
        }
        expect(new Set(tokens).size).toBe(16);
      });
    });
  });
}
