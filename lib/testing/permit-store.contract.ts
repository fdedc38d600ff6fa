import assert from 'node:assert/strict';
import { ManualClock } from '../core/clock';
import { SemaphoreAdmin } from '../permits/semaphore-admin';
import { PermitEngine } from '../permits/permit.engine';
import { DenyReason } from '../permits/deny-reason';
import { validateDefinition } from '../permits/definition.validator';
import type { Permit } from '../permits/permit';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import type { PermitStore } from '../permits/permit-store';
import { assertEqual, assertMatch, assertNoProperty } from './assertions';
import { eventually } from './eventually';
import { testApi, type ContractOptions } from './test-api';

/** What {@link describePermitStoreContract} is given for each test: two permit stores over the same data (two nodes). */
export interface PermitStoreFixture {
  /** Two stores on one store's data, as two nodes have; the suite connects and closes them. */
  readonly stores: readonly [PermitStore, PermitStore];
  /** Stores `raw` under the semaphore `name` as it is, past the codec (a value the library did not write). */
  plant(name: string, raw: string): Promise<void>;
  /** Called after each test, once the stores are closed (drop what the test wrote). */
  close(): Promise<void>;
}

/**
 * The behaviour every `PermitStore` must have, run against each implementation: store-level compare-and-set first,
 * then the engine and the operator's edits on top of the store, as nodes use them. {@link describeStoreContracts}
 * runs it on the `PermitRecordStore` of a backend; a store of its own (a backend's native path) runs it directly.
 */
export function describePermitStoreContract(name: string, setup: () => Promise<PermitStoreFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const eventTimeoutMs = options.eventTimeoutMs ?? 10_000;

  describe(`PermitStore contract: ${name}`, () => {
    let fixture: PermitStoreFixture;
    let a: PermitStore;
    let b: PermitStore;
    const clock = new ManualClock(1_700_000_000_000);
    const corrupt: string[] = [];
    const context = { clock, events: { corruptValue: (key: string) => void corrupt.push(key) } };
    const billing = validateDefinition({ name: 'billing', duration: '10s' });
    const entry = (revision: number): SemaphoreEntry => ({ revision, writeId: `w${revision}`, definition: billing, lastToken: 0, permits: [] });

    beforeEach(async () => {
      corrupt.length = 0;
      fixture = await setup();
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
        assertEqual(await a.read('billing'), { entry: undefined, raw: null });
      }, timeoutMs);

      it('creates only once', async () => {
        assert.equal(await a.compareAndSet('billing', { raw: null }, entry(1)), true);
        assert.equal(await b.compareAndSet('billing', { raw: null }, entry(1)), false);
        assertEqual((await b.read('billing')).entry, entry(1));
      }, timeoutMs);

      it('replaces only what it read', async () => {
        await a.compareAndSet('billing', { raw: null }, entry(1));
        const readByA = await a.read('billing');
        const readByB = await b.read('billing');
        assert.equal(await b.compareAndSet('billing', readByB, entry(2)), true);
        assert.equal(await a.compareAndSet('billing', readByA, entry(3)), false);
        assert.equal((await a.read('billing')).entry?.revision, 2);
      }, timeoutMs);

      it("keeps a node's own write in its view exactly as the other nodes decode it", async () => {
        // The writer does not decode what it wrote again: what it keeps must be what a read of the value gives.
        const held = { ...entry(1), permits: [{ semaphore: 'billing', acquirer: 'n', group: 'g', instance: 'n/1', fencingToken: 1, grantedAt: 1, refreshedAt: 1, expiresAt: 9 }] };
        await a.compareAndSet('billing', { raw: null }, held);
        await a.compareAndSet('billing', await a.read('billing'), { ...held, revision: 2, writeId: 'w2' });
        const read = await b.read('billing');
        assert.equal(a.peek('billing')?.raw, read.raw);
        assert.deepStrictEqual(a.peek('billing')!.entry, read.entry);
      }, timeoutMs);

      it('tells the other node of every write, newest revision wins in its view', async () => {
        const seen: number[] = [];
        const unwatch = b.watch((name, e) => name === 'billing' && e && seen.push(e.revision));
        await a.compareAndSet('billing', { raw: null }, entry(1));
        await a.compareAndSet('billing', await a.read('billing'), entry(2));
        await eventually('b to see revision 2', () => b.peek('billing')?.entry?.revision === 2, eventTimeoutMs);
        assert.ok(seen.includes(2), `revisions heard: ${seen.join(', ')}`);
        assert.deepEqual(b.known().map((k) => k.name), ['billing']);
        assert.ok(b.peek('billing')!.ageMs < 5_000, `age ${b.peek('billing')!.ageMs} ms`);
        unwatch();
      }, timeoutMs);

      it('lists entries, skipping and reporting unreadable ones, whose raw value stays readable', async () => {
        await a.compareAndSet('billing', { raw: null }, entry(1));
        await fixture.plant('junk', 'not json');
        assert.deepEqual((await a.list()).map((s) => s.name), ['billing']);
        assert.ok(corrupt.includes('junk'), `reported: ${corrupt.join(', ')}`);
        await assert.rejects(a.read('junk'), /"junk"/);
        assert.equal(await b.readRaw('junk'), 'not json');
      }, timeoutMs);
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
        await eventually('b to know both definitions', () => adminB.list().length === 2, eventTimeoutMs);
      });

      it('grants once, refreshes the holder, denies the other node', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = await one.tryAcquire('billing');
        assertMatch(first, { granted: true, outcome: 'granted' });
        assertMatch(await two.tryAcquire('billing'), { granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
        clock.advance(5_000);
        const again = await one.tryAcquire('billing');
        assertMatch(again, { granted: true, outcome: 'refreshed' });
        assert.equal(again.granted && first.granted && again.permit.fencingToken, first.granted && first.permit.fencingToken);
      }, timeoutMs);

      it('gives a second instance with the same acquirer name no share of the permit', async () => {
        assertMatch(await engine(a, 'app', 'production', 'app/one').tryAcquire('billing'), { granted: true });
        assertMatch(await engine(b, 'app', 'production', 'app/two').tryAcquire('billing'), { granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
      }, timeoutMs);

      it('hands over after expiry with a larger fencing token; the old holder cannot refresh or release it', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        clock.advance(10_000);
        const second = await two.tryAcquire('billing');
        assertMatch(second, { granted: true, outcome: 'granted' });
        const secondPermit = (second as { permit: Permit }).permit;
        assert.ok(secondPermit.fencingToken > first.permit.fencingToken, `token ${secondPermit.fencingToken} after ${first.permit.fencingToken}`);
        assertMatch(await one.refresh(first.permit), { granted: false, reason: DenyReason.PERMIT_LOST });
        assert.equal(await one.release(first.permit), 'not-held');
        const status = await adminB.permits();
        assert.deepEqual(status.find((s) => s.name === 'billing')?.permits.map((p) => p.acquirer), ['node-2']);
      }, timeoutMs);

      it('releases so the other node is granted at once; a second release finds nothing', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        assert.equal(await one.release(first.permit), 'released');
        assert.equal(await one.release(first.permit), 'not-held');
        assert.deepEqual(one.heldPermits(), []);
        assertMatch(await two.tryAcquire('billing'), { granted: true });
      }, timeoutMs);

      it('says since when nobody held it on a fresh grant: never held, after a release, after an expiry', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = await one.tryAcquire('billing');
        assertMatch(first, { granted: true, outcome: 'granted' });
        assertNoProperty(first, 'vacantSince'); // never held: nothing was missed
        clock.advance(5_000);
        assertNoProperty(await one.tryAcquire('billing'), 'vacantSince'); // a refresh says nothing
        const releasedAt = clock.now();
        assert.equal(await one.release((first as { permit: Permit }).permit), 'released');
        clock.advance(20_000);
        // The other node reads the removal from the store: it is vacant since the release, not since the expiry.
        const second = await two.tryAcquire('billing');
        assertMatch(second, { granted: true, outcome: 'granted', vacantSince: releasedAt });
        const expiresAt = (second as { permit: Permit }).permit.expiresAt;
        clock.advance(30_000);
        assertMatch(await one.tryAcquire('billing'), { granted: true, outcome: 'granted', vacantSince: expiresAt });
      }, timeoutMs);

      it('says nothing on a fresh grant while another permit is live', async () => {
        assertMatch(await engine(a, 'node-1').tryAcquire('reports'), { granted: true, outcome: 'granted' });
        const second = await engine(b, 'node-2').tryAcquire('reports');
        assertMatch(second, { granted: true, outcome: 'granted' });
        assertNoProperty(second, 'vacantSince');
      }, timeoutMs);

      it('keeps a released permit until lockAtLeastFor has passed and never refreshes it', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        assert.equal(await one.release(first.permit, clock.now() + 3_000), 'shortened');
        clock.advance(2_999);
        assertMatch(await one.tryAcquire('billing'), { granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
        assertMatch(await two.tryAcquire('billing'), { granted: false });
        clock.advance(1);
        const next = await one.tryAcquire('billing');
        assertMatch(next, { granted: true, outcome: 'granted' });
        assert.ok(next.granted && next.permit.fencingToken > first.permit.fencingToken, 'a new grant must carry a larger token');
      }, timeoutMs);

      it('tells the holder of a force-release on another node before its slot is freed', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const held = (await one.tryAcquire('billing')) as { permit: Permit };
        const told: string[] = [];
        one.watch(held.permit, (reason) => told.push(reason));
        assert.equal(await adminB.forceRelease('billing', held.permit.fencingToken), true);
        // The holder lets go right after telling its work; only then is the other node granted.
        await eventually('the slot to be freed', async () => (await two.tryAcquire('billing')).granted, eventTimeoutMs);
        assert.equal(told.length, 1);
        assert.match(told[0], /PERMIT_REVOKED/);
      }, timeoutMs);

      it('keeps a revoked permit\'s slot taken until it expires when its holder cannot be told', async () => {
        const one = engine(a, 'node-1');
        const held = (await one.tryAcquire('billing')) as { permit: Permit };
        one.dispose(); // a holder that hears nothing (frozen, cut off)
        assert.equal(await adminB.forceRelease('billing', held.permit.fencingToken), true);
        const two = engine(b, 'node-2');
        assertMatch(await two.tryAcquire('billing'), { granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
        clock.advance(10_000);
        assertMatch(await two.tryAcquire('billing'), { granted: true });
      }, timeoutMs);

      it('denies with CORRUPT_STATE on a value it did not write, until an operator resets it, and tokens still grow', async () => {
        const first = (await engine(a, 'node-1').tryAcquire('billing')) as { permit: Permit };
        await fixture.plant('billing', '{"hand":"written"}');
        assertMatch(await engine(a, 'node-1').tryAcquire('billing'), { granted: false, reason: DenyReason.CORRUPT_STATE });
        await adminA.resetPermits('billing');
        // A rebuilt entry waits out every permit the unreadable one could have held.
        assertMatch(await engine(b, 'node-2').tryAcquire('billing'), { granted: false, reason: DenyReason.RECOVERING });
        clock.advance(10_000);
        const after = await engine(b, 'node-2').tryAcquire('billing');
        assertMatch(after, { granted: true });
        assert.ok(after.granted && after.permit.fencingToken > first.permit.fencingToken, 'a grant after the reset must carry a larger token');
      }, timeoutMs);

      it('applies every one of many concurrent edits from two nodes (none is lost)', async () => {
        const names = Array.from({ length: 20 }, (_, i) => `job-${i}`);
        for (const n of names) await adminA.put({ name: n, duration: '10s', groupPattern: 'production' });
        await Promise.all(names.flatMap((n) => [adminA.pause(n), adminB.migrate('production', 'dr-site')]));
        const final = await adminA.permits();
        for (const n of names) assertMatch(final.find((s) => s.name === n)?.definition, { permits: 0, pausedFrom: 1, groupPattern: 'dr-site' }, n);
      }, timeoutMs);

      it('never grants more permits than defined under concurrent requests, and tokens only grow', async () => {
        const engines = [0, 1, 2, 3, 4, 5].map((i) => engine(i % 2 ? b : a, `node-${i}`));
        const tokens: number[] = [];
        for (let round = 0; round < 8; round++) {
          const results = await Promise.all(engines.map((e) => e.tryAcquire('reports')));
          const grants = results.flatMap((r) => (r.granted ? [r.permit] : []));
          assert.equal(grants.length, 2, `round ${round}: ${grants.length} grants`);
          for (const r of results) if (!r.granted) assert.equal(r.reason, DenyReason.NO_PERMIT_AVAILABLE);
          const roundTokens = grants.map((p) => p.fencingToken).sort((x, y) => x - y);
          if (tokens.length) assert.ok(roundTokens[0] > tokens[tokens.length - 1], `token ${roundTokens[0]} after ${tokens[tokens.length - 1]}`);
          tokens.push(...roundTokens);
          for (const permit of grants) {
            const holder = engines.find((e) => e.holder.acquirer === permit.acquirer)!;
            assert.equal(await holder.release(permit), 'released');
          }
        }
        assert.equal(new Set(tokens).size, 16);
      }, timeoutMs);
    });
  });
}
