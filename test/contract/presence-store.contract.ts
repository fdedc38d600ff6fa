import type { Presence } from '../../lib/presence/presence';
import type { PresenceStore } from '../../lib/presence/presence-store';
import { eventually } from '../support/eventually';

/** Two stores on one backend (two nodes), and a way to plant a value the library did not write. */
export interface PresenceStoreFixture {
  stores: [PresenceStore, PresenceStore];
  writeRaw(instance: string, raw: string): Promise<void>;
  close(): Promise<void>;
}

const presence = (instance: string, expiresAt = Date.now() + 60_000): Presence => ({
  instance, acquirer: instance.split('/')[0], group: 'production', startedAt: 1_000, version: '0.1.0', refreshedAt: expiresAt - 15_000, expiresAt,
});

/** What every presence store must do, run against each implementation. */
export function describePresenceStoreContract(name: string, setup: () => Promise<PresenceStoreFixture>): void {
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
      expect(listed.map((p) => p.instance)).toEqual(['a/1', 'b/1']);
      expect(listed[1].expiresAt).toBeGreaterThan(Date.now() + 80_000);
    });

    it('counts one operation per announce, list and withdraw, and none for events heard', async () => {
      const [a, b] = fixture.stores;
      b.watch(() => undefined);
      const before = [a.operationCount(), b.operationCount()];
      await a.announce(presence('a/1'));
      await a.list();
      await a.withdraw('a/1');
      expect([a.operationCount() - before[0], b.operationCount() - before[1]]).toEqual([3, 0]);
    });

    it('tells the other node of an announcement and of a withdrawal by events', async () => {
      const [a, b] = fixture.stores;
      const heard: Array<[string, boolean]> = [];
      b.watch((instance, p) => heard.push([instance, p !== null]));
      await a.announce(presence('a/1'));
      await eventually('the announcement event', () => heard.some(([i, there]) => i === 'a/1' && there));
      await a.withdraw('a/1');
      await eventually('the withdrawal event', () => heard.some(([i, there]) => i === 'a/1' && !there));
      expect(await b.list()).toEqual([]);
    });

    it('skips a value it cannot read, listing the others, and reports it once (not at every event and re-read)', async () => {
      const [a] = fixture.stores;
      a.watch(() => undefined);
      await a.announce(presence('a/1'));
      await fixture.writeRaw('junk/1', '{"v":1}');
      expect((await a.list()).map((p) => p.instance)).toEqual(['a/1']);
      expect((await a.list()).map((p) => p.instance)).toEqual(['a/1']);
      expect(corrupt[0]).toEqual(['junk/1: instance is not a non-empty string']);
    });
  });
}
