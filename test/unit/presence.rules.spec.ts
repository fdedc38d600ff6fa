import type { Presence } from '../../lib/presence/presence';
import { decodePresence, encodePresence } from '../../lib/presence/presence.codec';
import { announcement, isLive, livePresences, membershipChanges, nameClashes } from '../../lib/presence/presence.rules';

const self = { instance: 'app-1/u1', acquirer: 'app-1', group: 'production', startedAt: 1_000, version: '0.1.0' };
const at = (instance: string, acquirer: string, startedAt: number, expiresAt: number): Presence =>
  ({ instance, acquirer, group: 'production', startedAt, version: '0.1.0', refreshedAt: expiresAt - 15_000, expiresAt });

describe('presence rules', () => {
  it('announces for ttl from now, and counts an entry live until its expiry plus the skew bound', () => {
    const p = announcement(self, 10_000, 15_000);
    expect(p).toEqual({ ...self, refreshedAt: 10_000, expiresAt: 25_000 });
    expect(isLive(p, 25_499, 500)).toBe(true);
    expect(isLive(p, 25_500, 500)).toBe(false);
  });

  it('lists live instances oldest first, the same on every node', () => {
    const entries = [at('c/3', 'c', 300, 50_000), at('a/1', 'a', 100, 50_000), at('b/2', 'b', 100, 50_000), at('d/4', 'd', 50, 1_000)];
    expect(livePresences(entries, 10_000, 0).map((p) => p.instance)).toEqual(['a/1', 'b/2', 'c/3']);
  });

  it('finds names used by more than one live instance', () => {
    const live = [at('a/1', 'app', 1, 9e9), at('a/2', 'app', 2, 9e9), at('b/1', 'other', 3, 9e9)];
    expect([...nameClashes(live)].map(([name, ps]) => [name, ps.map((p) => p.instance)])).toEqual([['app', ['a/1', 'a/2']]]);
  });

  it('says who joined and who left', () => {
    const a = at('a/1', 'a', 1, 9e9);
    const b = at('b/1', 'b', 2, 9e9);
    const c = at('c/1', 'c', 3, 9e9);
    const changes = membershipChanges([a, b], [b, c]);
    expect(changes.joined.map((p) => p.instance)).toEqual(['c/1']);
    expect(changes.left.map((p) => p.instance)).toEqual(['a/1']);
  });

  it('encodes and decodes a presence, and names what is wrong with a bad value', () => {
    const p = { ...announcement(self, 10_000, 15_000), httpAddress: 'http://10.0.0.1:3000' };
    expect(decodePresence(p.instance, encodePresence(p))).toEqual(p);
    expect(decodePresence('x', 'nope')).toEqual({ unreadable: 'not JSON' });
    expect(decodePresence('x', JSON.stringify({ v: 2 }))).toEqual({ unreadable: 'format 2, expected 1' });
    expect(decodePresence('other', encodePresence(p))).toEqual({ unreadable: 'instance "app-1/u1" is not its key "other"' });
    expect(decodePresence(p.instance, encodePresence({ ...p, expiresAt: Number.NaN }))).toEqual({ unreadable: 'expiresAt is not a number' });
  });
});
