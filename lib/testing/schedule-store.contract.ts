import assert from 'node:assert/strict';
import { CorruptStateError } from '../core/errors/corrupt-state.error';
import { validateScheduleDefinition } from '../schedules/schedule-definition.validator';
import type { ScheduleRecord } from '../schedules/schedule-record';
import type { ScheduleStore } from '../schedules/schedule-store';
import { assertEqual } from './assertions';
import { eventually } from './eventually';
import { testApi, type ContractOptions } from './test-api';

/** What {@link describeScheduleStoreContract} is given for each test: two runtime schedule stores on one backend (two nodes). */
export interface ScheduleStoreFixture {
  /** Two stores on one store's data, as two nodes have; the suite connects and closes them. */
  readonly stores: readonly [ScheduleStore, ScheduleStore];
  /** Stores `raw` under the schedule id `id` as it is, past the codec (a value the library did not write). */
  plant(id: string, raw: string): Promise<void>;
  /** Called after each test, once the stores are closed (drop what the test wrote). */
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

/**
 * What every runtime schedule store must do, run against each implementation. {@link describeStoreContracts} runs it
 * on the `ScheduleRecordStore` of a backend.
 */
export function describeScheduleStoreContract(name: string, setup: () => Promise<ScheduleStoreFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const eventTimeoutMs = options.eventTimeoutMs ?? 10_000;

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
      assert.equal(results.filter(Boolean).length, 1);
      const winner = results[0] ? 'node-a' : 'node-b';
      assert.equal((await b.read('t1')).record?.updatedBy, winner);
      assert.equal((await a.read('t1')).record?.updatedBy, winner);
      assertEqual(await a.read('missing'), { raw: null, record: undefined });
    }, timeoutMs);

    it('replaces only the exact bytes read: of two writes on one read one wins, and an equal value in other bytes is a conflict', async () => {
      const [a, b] = fixture.stores;
      await a.compareAndSet('t1', { raw: null }, record('t1', 1));
      const read = await b.read('t1');
      const results = await Promise.all([a.compareAndSet('t1', read, record('t1', 2, { updatedBy: 'a' })), b.compareAndSet('t1', read, record('t1', 2, { updatedBy: 'b' }))]);
      assert.equal(results.filter(Boolean).length, 1);
      const current = await a.read('t1');
      assert.equal(current.record?.revision, 2);
      assert.equal(await a.compareAndSet('t1', read, record('t1', 3)), false);
      // The same record with its keys in another order: equal to JSON.parse, different to the member.
      const { v, ...rest } = JSON.parse(current.raw!) as Record<string, unknown>;
      assert.equal(await b.compareAndSet('t1', { raw: JSON.stringify({ ...rest, v }) }, record('t1', 3)), false);
      assert.equal(await b.compareAndSet('t1', current, record('t1', 3)), true);
      assertEqual((await a.read('t1')).record, record('t1', 3));
    }, timeoutMs);

    it('lists live schedules sorted by id, tombstones only when asked', async () => {
      const [a, b] = fixture.stores;
      for (const id of ['c', 'a', 'b']) await a.compareAndSet(id, { raw: null }, record(id, 1));
      const b1 = await a.read('b');
      await a.compareAndSet('b', b1, record('b', 2, { definition: null }));
      assert.deepEqual((await b.list()).map((v) => v.record?.id), ['a', 'c']);
      const all = await b.list({ removed: true });
      assert.deepEqual(all.map((v) => [v.record?.id, v.record?.revision, v.record?.definition === null]), [['a', 1, false], ['b', 2, true], ['c', 1, false]]);
      // Each listed value is the exact stored string, good for a compare-and-set.
      assert.equal(await a.compareAndSet('a', all[0], record('a', 2)), true);
    }, timeoutMs);

    it("tells watchers of other nodes' writes, tombstones included, with the record as written", async () => {
      const [a, b] = fixture.stores;
      const heard: Array<[string, number | undefined, boolean]> = [];
      const stop = b.watch({ changed: (id, r) => heard.push([id, r?.revision, r?.definition === null]) });
      await a.compareAndSet('w', { raw: null }, record('w', 1));
      const r1 = await a.read('w');
      await a.compareAndSet('w', r1, record('w', 2, { definition: null }));
      await eventually('both writes heard', () => heard.length >= 2, eventTimeoutMs);
      assert.deepEqual(heard, [['w', 1, false], ['w', 2, true]]);
      stop();
      // A watcher still listening hears the next writes; the stopped one, told by the same dispatch, must not.
      const later: string[] = [];
      const stopLater = b.watch({ changed: (id) => later.push(id) });
      await a.compareAndSet('w', await a.read('w'), record('w', 3));
      await a.compareAndSet('x', { raw: null }, record('x', 1));
      await eventually('the later writes heard', () => later.includes('w') && later.includes('x'), eventTimeoutMs);
      assert.equal(heard.length, 2);
      stopLater();
    }, timeoutMs);

    it('reports an unreadable value and skips it in listings; reading it throws CorruptStateError', async () => {
      const [a] = fixture.stores;
      await a.compareAndSet('good', { raw: null }, record('good', 1));
      await fixture.plant('bad', '{"v":1,"id":"bad"}');
      assert.deepEqual((await a.list()).map((v) => v.record?.id), ['good']);
      assert.equal(corrupt.length, 1, `reported: ${JSON.stringify(corrupt)}`);
      assert.equal(corrupt[0][0], 'bad');
      assert.match(corrupt[0][1], /missing or mistyped revision/);
      await assert.rejects(a.read('bad'), CorruptStateError);
    }, timeoutMs);

    it('counts its calls', async () => {
      const [a] = fixture.stores;
      const before = a.operationCount();
      await a.read('x');
      await a.list();
      assert.equal(a.operationCount(), before + 2);
    }, timeoutMs);
  });
}
