import { PermitEngine } from '../../lib/engine/permit.engine';
import { readSemaphoreStatus } from '../../lib/engine/semaphore-status';
import { DenyReason } from '../../lib/gatekeeper/deny-reason';
import { validateDefinition } from '../../lib/gatekeeper/definition.validator';
import { initialPermitState, type Permit } from '../../lib/gatekeeper/permit';
import type { PermitStore, PermitStoreEvents } from '../../lib/store/permit-store';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';

/** Two stores over the same data (two "nodes"), and a way to plant values the library did not write. */
export interface ContractFixture {
  stores: [PermitStore, PermitStore];
  writeRaw(map: 'definitions' | 'permits', key: string, value: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The behaviour every PermitStore must have, run against each implementation. Store-level compare-and-set
 * first, then the engine on top of the store, as nodes use it.
 */
export function describePermitStoreContract(name: string, createFixture: () => Promise<ContractFixture>): void {
  describe(`PermitStore contract: ${name}`, () => {
    let fixture: ContractFixture;
    let a: PermitStore;
    let b: PermitStore;
    const corrupt: string[] = [];
    const events: PermitStoreEvents = { corruptValue: (key) => corrupt.push(key) };
    const billing = validateDefinition({ name: 'billing', duration: '10s' });
    const reports = validateDefinition({ name: 'reports', duration: '10s', permits: 2 });

    beforeEach(async () => {
      corrupt.length = 0;
      fixture = await createFixture();
      [a, b] = fixture.stores;
      await a.connect(events);
      await b.connect(events);
    });

    afterEach(async () => {
      await a.close();
      await b.close();
      await fixture.close();
    });

    describe('definitions', () => {
      it('saves, reads, lists and deletes, and the other node sees each change', async () => {
        expect(await a.saveDefinition(billing)).toBe(true);
        expect(await a.saveDefinition(reports)).toBe(true);
        expect(a.getDefinition('billing')).toEqual(billing);
        await eventually('b to see both definitions', () => b.listDefinitions().length === 2);
        expect(b.listDefinitions().map((d) => d.name)).toEqual(['billing', 'reports']);
        expect(await b.deleteDefinition('billing')).toBe(true);
        expect(await b.deleteDefinition('billing')).toBe(false);
        await eventually('a to see the removal', () => a.getDefinition('billing') === undefined);
      });

      it('keeps an existing definition with ifAbsent, replaces it without', async () => {
        await a.saveDefinition(billing);
        const edited = { ...billing, permits: 3 };
        expect(await b.saveDefinition(edited, { ifAbsent: true })).toBe(false);
        expect(b.getDefinition('billing')).toEqual(billing);
        expect(await b.saveDefinition(edited)).toBe(true);
        expect(await a.readDefinition('billing')).toEqual(edited);
        await eventually('a to see the edit', () => a.getDefinition('billing')?.permits === 3);
        expect(await a.readDefinition('nothing')).toBeUndefined();
      });

      it('skips and reports a definition it cannot read, and takes the repaired one', async () => {
        await fixture.writeRaw('definitions', 'broken', '{"name":"broken","permits":"many"}');
        await eventually('the corrupt definition to be reported', () => corrupt.includes('broken'));
        expect(a.getDefinition('broken')).toBeUndefined();
        await a.saveDefinition(validateDefinition({ name: 'broken', duration: 1000 }));
        await eventually('b to see the repaired definition', () => b.getDefinition('broken')?.durationMs === 1000);
      });
    });

    describe('compare-and-set of permit state', () => {
      const state = (revision: number) => ({ ...initialPermitState(1000), revision, writeId: `w${revision}` });

      it('reads nothing for a semaphore never written', async () => {
        expect(await a.readPermitState('billing')).toEqual({ state: undefined, raw: null });
      });

      it('creates only once', async () => {
        const absent = await a.readPermitState('billing');
        expect(await a.compareAndSetPermitState('billing', absent, state(1))).toBe(true);
        expect(await b.compareAndSetPermitState('billing', absent, state(1))).toBe(false);
        expect((await b.readPermitState('billing')).state).toEqual(state(1));
      });

      it('replaces only what it read', async () => {
        await a.compareAndSetPermitState('billing', await a.readPermitState('billing'), state(1));
        const readByA = await a.readPermitState('billing');
        const readByB = await b.readPermitState('billing');
        expect(await b.compareAndSetPermitState('billing', readByB, state(2))).toBe(true);
        expect(await a.compareAndSetPermitState('billing', readByA, state(3))).toBe(false);
        expect((await a.readPermitState('billing')).state?.revision).toBe(2);
      });

      it('lists states, skipping and reporting unreadable ones; reset repairs them', async () => {
        await a.compareAndSetPermitState('billing', await a.readPermitState('billing'), state(1));
        await fixture.writeRaw('permits', 'junk', 'not json');
        expect((await a.listPermitStates()).map((s) => s.name)).toEqual(['billing']);
        expect(corrupt).toContain('junk');
        await expect(a.readPermitState('junk')).rejects.toThrow(/"junk"/);
        await a.resetPermitState('junk', state(7));
        expect((await b.readPermitState('junk')).state?.revision).toBe(7);
      });
    });

    describe('the gatekeeper on this store', () => {
      const clock = new FakeClock();
      const engine = (store: PermitStore, acquirer: string, group = 'production') =>
        new PermitEngine(store, { acquirer, group }, clock);

      beforeEach(async () => {
        await a.saveDefinition(billing);
        await a.saveDefinition(reports);
        await eventually('b to load definitions', () => b.listDefinitions().length === 2);
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
        const status = await readSemaphoreStatus(b, clock.now());
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

      it('keeps a released permit until lockAtLeastFor has passed', async () => {
        const one = engine(a, 'node-1');
        const two = engine(b, 'node-2');
        const first = (await one.tryAcquire('billing')) as { permit: Permit };
        expect(await one.release(first.permit, clock.now() + 3_000)).toBe('shortened');
        clock.advance(2_999);
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: false });
        clock.advance(1);
        expect(await two.tryAcquire('billing')).toMatchObject({ granted: true });
      });

      it('denies with CORRUPT_STATE on a value it did not write, until an operator resets it', async () => {
        await fixture.writeRaw('permits', 'billing', '{"hand":"written"}');
        expect(await engine(a, 'node-1').tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.CORRUPT_STATE });
        await a.resetPermitState('billing', { ...initialPermitState(clock.now()), revision: 1 });
        expect(await engine(a, 'node-1').tryAcquire('billing')).toMatchObject({ granted: true });
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
            const holder = engines.find((e) => e.identity.acquirer === permit.acquirer)!;
            expect(await holder.release(permit)).toBe('released');
          }
        }
        expect(new Set(tokens).size).toBe(16);
      });
    });
  });
}
