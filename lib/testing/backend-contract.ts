import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { updateRecord } from '../store/read-decide-write';
import type { MissedReason, RecordMap, StoredRecord } from '../store/record-map';
import type { StoreBackend } from '../store/store-backend';
import { writeIdsOf } from '../store/write-ids';
import { eventually } from './eventually';
import { testApi, type ContractOptions } from './test-api';

/**
 * What {@link describeBackendContract} and {@link describeStoreContracts} are given for each test: two backend
 * instances on one store, as two nodes.
 */
export interface BackendContractFixture {
  /** Two instances of the backend on the same store (two nodes' connections); the suite opens and closes them. */
  readonly backends: readonly [StoreBackend, StoreBackend];
  /**
   * Loses the store's data as the backend can lose it (a restart without persistence, a restore from an older
   * backup, a failover that missed writes). Leave it out for a store that cannot lose acknowledged writes: the
   * lost-data cases are then not run.
   */
  loseData?(): Promise<void>;
  /** Called after each test, once the suite closed the backends (drop what the test wrote). */
  close(): Promise<void>;
}

/**
 * The suite of the store contract's primitives (`StoreBackend`): every promise the capabilities rely on, run
 * against a backend factory: compare-and-set writes that lose to a stale expectation, reads by key, by keys and by
 * field, the change feed (in order, without this node's own values when asked), unique write ids, counters that
 * never go back, the concurrency fuzz (many writers, one record and one counter, no lost update) and, where the
 * fixture can lose data, the lost-data cases. {@link describeStoreContracts} runs it with every capability's suite on
 * stores built over the backends: that is the call a backend runs.
 *
 * ```ts
 * import { describeBackendContract } from 'nestjs-gatekeeper/testing';
 * describeBackendContract('my store', async () => ({ backends: [new MyBackend(), new MyBackend()], close: async () => {} }));
 * ```
 */
export function describeBackendContract(name: string, setup: () => Promise<BackendContractFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const eventTimeoutMs = options.eventTimeoutMs ?? 10_000;

  describe(`StoreBackend contract: ${name}`, () => {
    let fixture: BackendContractFixture;
    let a: StoreBackend;
    let b: StoreBackend;
    /** A map name of this test's own, so tests never meet each other's records. */
    let mapName: string;
    beforeEach(async () => {
      fixture = await setup();
      [a, b] = fixture.backends;
      await a.open();
      await b.open();
      mapName = `contract-${randomUUID().slice(0, 8)}`;
    });
    afterEach(async () => {
      await Promise.all([a.close(), b.close()]);
      await fixture.close();
    });
    const maps = async (spec?: { indexes?: readonly string[] }): Promise<[RecordMap, RecordMap]> => [await a.map(mapName, spec), await b.map(mapName, spec)];

    it('creates a record only where there is none', async () => {
      const [ma, mb] = await maps();
      assert.equal(await ma.get('k'), undefined);
      assert.equal(await ma.create('k', 'one'), true);
      assert.equal(await mb.create('k', 'two'), false);
      assert.deepEqual(await mb.get('k'), { key: 'k', value: 'one' });
    }, timeoutMs);

    it('replaces and removes only a record still holding the exact value expected', async () => {
      const [ma, mb] = await maps();
      await ma.create('k', '{"n":1}');
      const read = (await mb.get('k'))!;
      assert.equal(await ma.replace(read, '{"n":2}'), true);
      assert.equal(await mb.replace(read, '{"n":3}'), false, 'a replace against a stale value must lose');
      assert.equal(await mb.remove(read), false, 'a remove against a stale value must lose');
      assert.equal((await mb.get('k'))?.value, '{"n":2}');
      assert.equal(await mb.remove((await mb.get('k'))!), true);
      assert.equal(await ma.get('k'), undefined);
      assert.equal(await ma.replace({ key: 'k', value: '{"n":2}' }, '{"n":4}'), false, 'a replace of an absent record must lose');
    }, timeoutMs);

    it('replaces a value that opens with its write id only while it is that very value', async () => {
      const [ma, mb] = await maps();
      const entry = (revision: number, writeId: string, body: string) => `{"v":2,"revision":${revision},"writeId":"${writeId}",${body}}`;
      const first = entry(7, 'w-1.a', '"n":1');
      await ma.create('k', first);
      const read = (await mb.get('k'))!;
      assert.equal(await ma.replace(read, entry(8, 'w-1.b', '"n":2')), true);
      // The same revision and body under another write id is another value: a replace against the first must lose.
      assert.equal(await mb.replace({ key: 'k', value: entry(8, 'w-1.a', '"n":2') }, entry(9, 'w-2.a', '"n":3')), false, 'a stale write id must lose');
      assert.equal(await mb.replace(read, entry(9, 'w-2.b', '"n":3')), false, 'a replace against a value overwritten since must lose');
      assert.equal(await mb.replace({ key: 'k', value: entry(8, 'w-1.b', '"n":2') }, entry(9, 'w-2.c', '"n":3')), true);
      assert.equal((await ma.get('k'))?.value, entry(9, 'w-2.c', '"n":3'));
      await ma.create('plain', '{"writeId":"w-3.a","n":1}');
      assert.equal(await ma.replace({ key: 'plain', value: '{"writeId":"w-3.a","n":0}' }, '{"n":2}'), false, 'a value not opening with its write id is compared whole');
      assert.equal(await ma.replace({ key: 'absent', value: first }, entry(9, 'w-4.a', '"n":1')), false, 'a replace of an absent record must lose');
    }, timeoutMs);

    it('with a clock of its own, replaces with notBefore only once that clock reached it', async () => {
      const [ma] = await maps();
      await ma.create('k', 'one');
      const read = (await ma.get('k'))!;
      if (!a.now) {
        // No clock of its own: notBefore is ignored.
        assert.equal(await ma.replace(read, 'two', { notBefore: Date.now() + 3_600_000 }), true);
        return;
      }
      const now = await a.now();
      assert.equal(await ma.replace(read, 'two', { notBefore: now + 3_600_000 }), false, 'a write the store\'s clock has not reached must lose');
      assert.equal((await ma.get('k'))?.value, 'one');
      assert.equal(await ma.replace(read, 'two', { notBefore: now - 1_000 }), true);
      assert.equal((await ma.get('k'))?.value, 'two');
    }, timeoutMs);

    it('with a clock of its own, may bring readings of it back from its own calls: each within the clock\'s time around it', async () => {
      if (!a.now || !a.onClockReading) return; // nothing to check: its counts read the clock themselves
      const [ma] = await maps();
      const readings: Array<{ storeMs: number; sentAt: number }> = [];
      const before = await a.now();
      const stop = a.onClockReading((storeMs, sentAt) => readings.push({ storeMs, sentAt }));
      // A watch starts the change feed, whose check of itself (every `listenCheckMs`, 5 s by default) brings one.
      const unwatch = await ma.watch({ changed: () => undefined, missed: () => undefined });
      try {
        await eventually('a reading of the store\'s clock', () => readings.length > 0, Math.max(eventTimeoutMs, 15_000));
        const after = await a.now();
        assert.ok(readings[0].storeMs >= before && readings[0].storeMs <= after, `the reading ${readings[0].storeMs} is between ${before} and ${after}`);
        assert.ok(readings[0].sentAt <= performance.now());
      } finally {
        stop();
        await unwatch();
      }
    }, timeoutMs);

    it('reads many by key, lists, and finds by an indexed field', async () => {
      const [ma, mb] = await maps({ indexes: ['state'] });
      await ma.create('t1', JSON.stringify({ state: 'pending', n: 1 }));
      await ma.create('t2', JSON.stringify({ state: 'running', n: 2 }));
      await mb.create('t3', JSON.stringify({ state: 'pending', n: 3 }));
      const keys = (records: StoredRecord[]) => records.map((r) => r.key).sort();
      assert.deepEqual(keys(await mb.getMany(['t1', 't3', 'absent'])), ['t1', 't3']);
      assert.deepEqual(keys(await mb.getMany([])), []);
      assert.deepEqual(keys(await ma.list()), ['t1', 't2', 't3']);
      assert.deepEqual(keys(await ma.findBy('state', 'pending')), ['t1', 't3']);
      assert.deepEqual(keys(await ma.findBy('state', 'done')), []);
      assert.deepEqual(JSON.parse((await mb.getMany(['t2']))[0].value), { state: 'running', n: 2 }, 'values come back as written');
    }, timeoutMs);

    it('writes and removes a single-writer record whatever it holds', async () => {
      const [ma, mb] = await maps();
      await ma.put('me', 'v1', { ttlMs: 60_000 });
      await ma.put('me', 'v2', { ttlMs: 60_000 });
      assert.equal((await mb.get('me'))?.value, 'v2');
      await ma.delete('me');
      await ma.delete('me'); // removing what is gone is no error
      assert.equal(await mb.get('me'), undefined);
    }, timeoutMs);

    it('tells another node every change of a map, one key in order', async () => {
      const [ma, mb] = await maps();
      const heard: Array<[string, string | null]> = [];
      const stop = await mb.watch({ changed: (key, value) => heard.push([key, value]), missed: () => undefined });
      try {
        await ma.create('k', 'v1');
        await ma.replace({ key: 'k', value: 'v1' }, 'v2');
        await ma.remove({ key: 'k', value: 'v2' });
        await eventually('three changes heard', () => heard.length >= 3, eventTimeoutMs);
        assert.deepEqual(heard, [['k', 'v1'], ['k', 'v2'], ['k', null]]);
      } finally {
        await stop();
      }
    }, timeoutMs);

    it('leaves the values whose write ids carry the mark it is given out of a watch, never a removal', async () => {
      const [ma, mb] = await maps();
      const own: Array<[string, string | null]> = [];
      const stop = await ma.watch({ changed: (key, value) => own.push([key, value]), missed: () => undefined }, { exceptMark: writeIdsOf(a).mark });
      try {
        const mine = JSON.stringify({ writeId: writeIdsOf(a).next() });
        await ma.create('mine', mine);
        const theirs = JSON.stringify({ writeId: writeIdsOf(b).next() });
        await mb.create('theirs', theirs);
        await eventually('the other node\'s write heard', () => own.some(([key]) => key === 'theirs'), eventTimeoutMs);
        await mb.remove({ key: 'mine', value: mine });
        await eventually('the removal of an own write heard', () => own.some(([key, value]) => key === 'mine' && value === null), eventTimeoutMs);
        // A backend may send its own values anyway; one that leaves them out leaves out only those.
        assert.ok(own.every(([key, value]) => key === 'theirs' || value === null || value === mine));
        assert.deepEqual(own.filter(([key]) => key === 'theirs'), [['theirs', theirs]]);
      } finally {
        await stop();
      }
    }, timeoutMs);

    it('counts up and never goes back, across nodes', async () => {
      const [ca, cb] = [await a.counters(), await b.counters()];
      const counter = `c-${mapName}`;
      assert.equal(await ca.current(counter), 0);
      const first = (await ca.next(counter)).value;
      const second = (await cb.next(counter)).value;
      const third = (await ca.next(counter)).value;
      assert.ok(first < second && second < third, `${first} < ${second} < ${third}`);
      assert.equal(await cb.current(counter), third);
    }, timeoutMs);

    it('loses no update with many writers on one counter and one record (fuzz)', async () => {
      const [ma, mb] = await maps();
      const [ca, cb] = [await a.counters(), await b.counters()];
      const counter = `fuzz-${mapName}`;
      const writers = 8;
      const rounds = 5;
      const values: number[] = [];
      const increment = (map: RecordMap, backend: StoreBackend) => updateRecord(map, 'sum', (current) => {
        const n = current ? (JSON.parse(current.value) as { n: number }).n : 0;
        return { result: n + 1, write: JSON.stringify({ n: n + 1, writeId: writeIdsOf(backend).next() }) };
      }, { attempts: 1_000 });
      await Promise.all(Array.from({ length: writers }, async (_, w) => {
        for (let round = 0; round < rounds; round++) {
          const [map, counters, backend] = w % 2 === 0 ? [ma, ca, a] : [mb, cb, b];
          values.push((await counters.next(counter)).value);
          await increment(map, backend);
        }
      }));
      const total = writers * rounds;
      assert.equal(new Set(values).size, total, 'a counter value was handed out twice');
      assert.equal(Math.max(...values), await ca.current(counter));
      assert.equal((JSON.parse((await ma.get('sum'))!.value) as { n: number }).n, total, 'an update was lost');
    }, timeoutMs);

    it('says nothing was lost under a key never written', async () => {
      const [ma] = await maps();
      assert.equal(await ma.get('never'), undefined);
      assert.equal(await ma.lostSince('never'), undefined);
    }, timeoutMs);

    it('answers lostSince for a key marked lost, from then on', async () => {
      const [ma, mb] = await maps();
      const before = Date.now();
      await ma.markLost('gone');
      const since = await mb.lostSince('gone');
      assert.ok(since !== undefined && since >= before - 60_000, `lostSince ${since}`);
    }, timeoutMs);

    it('fails a call it cannot make with StoreUnavailableError, never with a success', async () => {
      const [ma] = await maps();
      await a.close();
      await b.close();
      // Closed: the map must not answer from anything but the store.
      await assert.rejects(ma.get('k', { timeoutMs: 2_000 }), (error) => error instanceof StoreUnavailableError);
      await assert.rejects(ma.create('k', 'v', { timeoutMs: 2_000 }), (error) => error instanceof StoreUnavailableError);
      await a.open();
      await b.open();
    }, timeoutMs);

    it('after a loss of data: says since when, tells watchers, and counts on above every value before', async (): Promise<void> => {
      if (!fixture.loseData) return;
      const [ma, mb] = await maps();
      const counters = await a.counters();
      const counter = `lost-${mapName}`;
      let before = 0;
      for (let n = 0; n < 3; n++) before = (await counters.next(counter)).value;
      await ma.create('k', 'v');
      const missed: MissedReason[] = [];
      const stop = await mb.watch({ changed: () => undefined, missed: (reason) => missed.push(reason) });
      try {
        const lostAfter = Date.now();
        await fixture.loseData();
        assert.equal(await ma.get('k'), undefined);
        const since = await ma.lostSince('k');
        assert.ok(since !== undefined && since >= lostAfter - 60_000, `lostSince ${since}`);
        const after = await (await b.counters()).next(counter);
        assert.ok(after.value > before, `counter went back: ${after.value} after ${before}`);
        assert.ok(after.lostSince !== undefined, 'the counter did not say it was lost');
        await eventually('a watcher told changes may have been missed', () => missed.length > 0, eventTimeoutMs);
        // A second loss at once (within the same ms on a fast store): still above every value handed out before it.
        const last = (await counters.next(counter)).value;
        await fixture.loseData();
        const again = await counters.next(counter);
        assert.ok(again.value > last, `counter went back after a second loss: ${again.value} after ${last}`);
      } finally {
        await stop();
      }
    }, timeoutMs);
  });
}
