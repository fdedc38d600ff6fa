import assert from 'node:assert/strict';
import type { Presence } from '../presence/presence';
import type { PresenceStore } from '../presence/presence-store';
import { eventually } from './eventually';
import { testApi, type ContractOptions } from './test-api';

/** What {@link describePresenceStoreContract} is given for each test: two presence stores on one backend (two nodes). */
export interface PresenceStoreFixture {
  /** Two stores on one store's data, as two nodes have; the suite connects and closes them. */
  readonly stores: readonly [PresenceStore, PresenceStore];
  /** Stores `raw` under the instance id `instance` as it is, past the codec (a value the library did not write). */
  plant(instance: string, raw: string): Promise<void>;
  /** Called after each test, once the stores are closed (drop what the test wrote). */
  close(): Promise<void>;
}

const presence = (instance: string, expiresAt = Date.now() + 60_000): Presence => ({
  instance, acquirer: instance.split('/')[0], group: 'production', startedAt: 1_000, version: '0.1.0', refreshedAt: expiresAt - 15_000, expiresAt,
});

/**
 * What every presence store must do, run against each implementation. {@link describeStoreContracts} runs it on the
 * `PresenceRecordStore` of a backend.
 */
export function describePresenceStoreContract(name: string, setup: () => Promise<PresenceStoreFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const eventTimeoutMs = options.eventTimeoutMs ?? 10_000;

  describe(`PresenceStore contract: ${name}`, () => {
    let fixture: PresenceStoreFixture;
    /** What each store reported unreadable. */
    let corrupt: [string[], string[]];
    beforeEach(async () => {
      fixture = await setup();
      corrupt = [[], []];
      await Promise.all(fixture.stores.map((s, i) => s.connect({ corruptValue: (key, reason) => corrupt[i].push(`${key}: ${reason}`) })));
    });
    afterEach(async () => {
      await Promise.all(fixture.stores.map((s) => s.close()));
      await fixture.close();
    });

    it('lists what every node announced, renewals replacing the entry', async () => {
      const [a, b] = fixture.stores;
      await a.announce(presence('a/1'));
      await b.announce(presence('b/1'));
      await b.announce(presence('b/1', Date.now() + 90_000));
      const listed = (await a.list()).sort((x, y) => x.instance.localeCompare(y.instance));
      assert.deepEqual(listed.map((p) => p.instance), ['a/1', 'b/1']);
      assert.ok(listed[1].expiresAt > Date.now() + 80_000, `the renewal's expiry: ${listed[1].expiresAt}`);
    }, timeoutMs);

    it('counts one operation per announce, list and withdraw, and none for events heard', async () => {
      const [a, b] = fixture.stores;
      b.watch(() => undefined);
      const before = [a.operationCount(), b.operationCount()];
      await a.announce(presence('a/1'));
      await a.list();
      await a.withdraw('a/1');
      assert.deepEqual([a.operationCount() - before[0], b.operationCount() - before[1]], [3, 0]);
    }, timeoutMs);

    it('tells the other node of an announcement and of a withdrawal by events', async () => {
      const [a, b] = fixture.stores;
      const heard: Array<[string, boolean]> = [];
      b.watch((instance, p) => heard.push([instance, p !== null]));
      await a.announce(presence('a/1'));
      await eventually('the announcement event', () => heard.some(([i, there]) => i === 'a/1' && there), eventTimeoutMs);
      await a.withdraw('a/1');
      await eventually('the withdrawal event', () => heard.some(([i, there]) => i === 'a/1' && !there), eventTimeoutMs);
      assert.deepEqual(await b.list(), []);
    }, timeoutMs);

    it('skips a value it cannot read, listing the others, and reports it once (not at every event and re-read)', async () => {
      const [a] = fixture.stores;
      a.watch(() => undefined);
      await a.announce(presence('a/1'));
      await fixture.plant('junk/1', '{"v":1}');
      assert.deepEqual((await a.list()).map((p) => p.instance), ['a/1']);
      assert.deepEqual((await a.list()).map((p) => p.instance), ['a/1']);
      assert.deepEqual(corrupt[0], ['junk/1: instance is not a non-empty string']);
    }, timeoutMs);
  });
}
