import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { MemoryRecords } from '../../lib/backends/memory/memory-records';
import { systemClock } from '../../lib/core/clock';
import { encodePresence } from '../../lib/presence/presence.codec';
import { PRESENCE_MAP, PresenceRecordStore } from '../../lib/presence/presence-record.store';
import { announcement } from '../../lib/presence/presence.rules';
import { PresenceTracker } from '../../lib/presence/presence.tracker';
import { eventually } from '../support/eventually';

/** Presence re-reads at once when the feed says it may have lost changes, not at its next interval (a minute here). */
describe('presence after missed changes', () => {
  it('sees an instance whose announcement event was lost once the feed says so, and not while it is down', async () => {
    const records = new MemoryRecords();
    const store = new PresenceRecordStore(new MemoryBackend({ records }));
    await store.connect();
    const self = { instance: 'i-1', acquirer: 'node-1', group: 'g', startedAt: Date.now(), version: 'test' };
    const tracker = new PresenceTracker(store, self, systemClock, { intervalMs: 60_000, ttlMs: 120_000, clockSkewMs: 0 });
    await tracker.start();
    try {
      // Another instance announces itself; its event is lost (the store applied the write, the feed dropped it).
      const other = announcement({ ...self, instance: 'i-2', acquirer: 'node-2' }, Date.now(), 120_000);
      records.map(PRESENCE_MAP).set('i-2', encodePresence(other));
      const calls = store.operationCount();
      records.missChanges('disconnected');
      await Promise.resolve();
      expect(store.operationCount()).toBe(calls);
      records.missChanges('member-left');
      await eventually('the other instance seen', () => tracker.live().some((p) => p.instance === 'i-2'));
    } finally {
      await tracker.stop();
      await store.close();
    }
  });
});
