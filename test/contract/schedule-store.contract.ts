import { CorruptStateError } from '../../lib/core/errors/corrupt-state.error';
import { validateScheduleDefinition } from '../../lib/schedules/schedule-definition.validator';
import type { ScheduleRecord } from '../../lib/schedules/schedule-record';
import type { ScheduleStore } from '../../lib/schedules/schedule-store';
import { eventually } from '../support/eventually';

/** Two stores on one backend (two nodes), and a way to plant a value the library did not write. */
export interface ScheduleStoreFixture {
  stores: [ScheduleStore, ScheduleStore];
  plant(id: string, raw: string): Promise<void>;
  close(): Promise<void>;
}

const T0 = Date.now();
const record = (id: string, revision: number, over: Partial<ScheduleRecord> = {}): ScheduleRecord => ({
  id,
  revision,
  updatedAt: T0,
  updatedBy: 'node-a',
  writeId: `w-${id}-${revision}`,
  definition: validateScheduleDefinition({ id, cron: '0 * * * *', handler: 'report', duration: '1m', data: { id, revision } }),
  ...over,
});

/** What every schedule store must do, run against each implementation. */
export function describeScheduleStoreContract(name: string, setup: () => Promise<ScheduleStoreFixture>): void {
  describe(`ScheduleStore contract: ${name}`, () => {
    let fixture: ScheduleStoreFixture;
    let corrupt: Array<[string, string]>;
    beforeEach(async () => {
      fixture = await setup();
      corrupt = [];
      await Promise.all(fixture.stores.map((s) => s.connect({ corruptValue: (key, reason) => corrupt.push([key, reason]) })));
    });
    afterEach(async () => {
      await Promise.all(fixture.stores.map((s) => s.close()));
      await fixture.close();
    });

    it('creates once: of two creates of one id, one wins, and both stores read the winner', async () => {
      const [a, b] = fixture.stores;
      const results = await Promise.all([a.compareAndSet('t1', { raw: null }, record('t1', 1)), b.compareAndSet('t1', { raw: null }, record('t1', 1, { updatedBy: 'node-b' }))]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? 'node-a' : 'node-b';
      expect((await b.read('t1')).record?.updatedBy).toBe(winner);
      expect((await a.read('t1')).record?.updatedBy).toBe(winner);
      expect(await a.read('missing')).toEqual({ raw: null, record: undefined });
    });

    it('replaces only the exact bytes read: of two writes on one read one wins, and an equal value in other bytes is a conflict', async () => {
      const [a, b] = fixture.stores;
      await a.compareAndSet('t1', { raw: null }, record('t1', 1));
      const read = await b.read('t1');
      const results = await Promise.all([a.compareAndSet('t1', read, record('t1', 2, { updatedBy: 'a' })), b.compareAndSet('t1', read, record('t1', 2, { updatedBy: 'b' }))]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const current = await a.read('t1');
      expect(current.record?.revision).toBe(2);
      expect(await a.compareAndSet('t1', read, record('t1', 3))).toBe(false);
      // The same record with its keys in another order: equal to JSON.parse, different to the member.
      const { v, ...rest } = JSON.parse(current.raw!) as Record<string, unknown>;
      expect(await b.compareAndSet('t1', { raw: JSON.stringify({ ...rest, v }) }, record('t1', 3))).toBe(false);
      expect(await b.compareAndSet('t1', current, record('t1', 3))).toBe(true);
      expect((await a.read('t1')).record).toEqual(record('t1', 3));
    });

    it('lists live schedules sorted by id, tombstones only when asked, and never the change marker', async () => {
      const [a, b] = fixture.stores;
      await b.touchMarker('m1');
      for (const id of ['c', 'a', 'b']) await a.compareAndSet(id, { raw: null }, record(id, 1));
      const b1 = await a.read('b');
      await a.compareAndSet('b', b1, record('b', 2, { definition: null }));
      expect((await b.list()).map((v) => v.record?.id)).toEqual(['a', 'c']);
      const all = await b.list({ removed: true });
      expect(all.map((v) => [v.record?.id, v.record?.revision, v.record?.definition === null])).toEqual([['a', 1, false], ['b', 2, true], ['c', 1, false]]);
      // Each listed value is the exact stored string, good for a compare-and-set.
      expect(await a.compareAndSet('a', all[0], record('a', 2))).toBe(true);
    });

    it('keeps one change marker that any node sets and every node reads', async () => {
      const [a, b] = fixture.stores;
      expect(await a.readMarker()).toBeNull();
      await a.touchMarker('w-1');
      expect(await b.readMarker()).toBe('w-1');
      await b.touchMarker('w-2');
      expect(await a.readMarker()).toBe('w-2');
    });

    it("tells watchers of other nodes' writes, tombstones included, with the record as written", async () => {
      const [a, b] = fixture.stores;
      const heard: Array<[string, number | undefined, boolean]> = [];
      const stop = b.watch({ changed: (id, r) => heard.push([id, r?.revision, r?.definition === null]) });
      await a.compareAndSet('w', { raw: null }, record('w', 1));
      const r1 = await a.read('w');
      await a.compareAndSet('w', r1, record('w', 2, { definition: null }));
      await a.touchMarker('not-a-schedule');
      await eventually('both writes heard', () => heard.length >= 2);
      expect(heard).toEqual([['w', 1, false], ['w', 2, true]]);
      stop();
      // A watcher still listening hears the next writes; the stopped one, told by the same dispatch, must not.
      const later: string[] = [];
      const stopLater = b.watch({ changed: (id) => later.push(id) });
      await a.compareAndSet('w', await a.read('w'), record('w', 3));
      await a.compareAndSet('x', { raw: null }, record('x', 1));
      await eventually('the later writes heard', () => later.includes('w') && later.includes('x'));
      expect(heard).toHaveLength(2);
      stopLater();
    });

    it('reports an unreadable value and skips it in listings; reading it throws CorruptStateError', async () => {
      const [a] = fixture.stores;
      await a.compareAndSet('good', { raw: null }, record('good', 1));
      await fixture.plant('bad', '{"v":1,"id":"bad"}');
      expect((await a.list()).map((v) => v.record?.id)).toEqual(['good']);
      expect(corrupt).toEqual([['bad', expect.stringContaining('missing or mistyped revision')]]);
      await expect(a.read('bad')).rejects.toThrow(CorruptStateError);
    });

    it('counts its calls', async () => {
      const [a] = fixture.stores;
      const before = a.operationCount();
      await a.read('x');
      await a.readMarker();
      expect(a.operationCount()).toBe(before + 2);
    });
  });
}
