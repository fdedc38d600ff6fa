import { ClaimShares } from '../../lib/tasks/claim-shares';

const NOW = 1_000_000;

/** `count` claims by `instance` heard at `at`, each of its own task (numbered from `from`). */
function claims(shares: ClaimShares, instance: string, count: number, from = 0, at = NOW): void {
  for (let i = from; i < from + count; i++) shares.heard(`t:${instance}-${i}`, 1, instance, at);
}

describe('ClaimShares: who made the recent claims, and how much work a node may take now', () => {
  it('a node that heard no other node claim never holds back, whatever it took itself', () => {
    const shares = new ClaimShares('a', 8, 0);
    expect(shares.allowance(NOW)).toBe(Infinity);
    claims(shares, 'a', 20);
    expect(shares.allowance(NOW)).toBe(Infinity);
  });

  it('allows `slack` claims past an even share of the window: a node behind catches up, one ahead waits', () => {
    const shares = new ClaimShares('a', 64, 1);
    claims(shares, 'b', 3);
    claims(shares, 'c', 3);
    expect(shares.allowance(NOW)).toBe(4); // 0 of 6 with three nodes: 0 + 4 <= (6 + 4) / 3 + 1
    claims(shares, 'a', 3);
    expect(shares.allowance(NOW)).toBe(1); // even: one more
    claims(shares, 'a', 2, 3);
    expect(shares.allowance(NOW)).toBe(0); // 5 of 11: ahead, waits while the others claim
    const loose = new ClaimShares('a', 64, 8);
    claims(loose, 'b', 4);
    claims(loose, 'a', 18);
    expect(loose.allowance(NOW)).toBe(2); // 18 + 2 <= (22 + 2) / 2 + 8
    claims(loose, 'a', 2, 18);
    expect(loose.allowance(NOW)).toBe(0);
  });

  it('of nodes that heard the same claims, one may always claim (they cannot all be past an even share), with any slack', () => {
    for (const [a, b, c] of [[10, 10, 10], [20, 5, 5], [1, 30, 2], [0, 0, 7], [21, 21, 22]]) {
      const heard = ['a', 'b', 'c'].map((self) => new ClaimShares(self, 64, 1));
      for (const shares of heard) {
        claims(shares, 'a', a);
        claims(shares, 'b', b);
        claims(shares, 'c', c);
      }
      expect(Math.max(...heard.map((s) => s.allowance(NOW)))).toBeGreaterThan(0);
    }
  });

  it('counts a claim told twice (a renewal, its own landing and then its event) once, and a new epoch anew', () => {
    const shares = new ClaimShares('a', 64, 1);
    claims(shares, 'b', 2);
    shares.heard('t:x', 5, 'a', NOW);
    shares.heard('t:x', 5, 'a', NOW);
    shares.heard('t:x', 5, 'a', NOW);
    expect(shares.allowance(NOW)).toBe(3); // own 1 of 3 with two nodes: 1 + 3 <= (3 + 3) / 2 + 1
    shares.heard('t:x', 6, 'a', NOW); // claimed again after a lapse: a claim of its own
    expect(shares.allowance(NOW)).toBe(2);
  });

  it('forgets a node once `size` newer claims were made without it, or once it claimed nothing for `activeMs` while others did', () => {
    const shares = new ClaimShares('a', 8, 0, 1_000);
    claims(shares, 'dead', 4);
    claims(shares, 'a', 4);
    expect(shares.allowance(NOW)).toBe(0);
    claims(shares, 'a', 4, 4);
    expect(shares.allowance(NOW)).toBe(Infinity); // the window holds only its own claims: alone again
    const quiet = new ClaimShares('a', 64, 4, 1_000);
    claims(quiet, 'a', 12, 0, NOW - 2_000);
    claims(quiet, 'gone', 4, 0, NOW - 2_000);
    expect(quiet.allowance(NOW)).toBe(0); // nobody claimed since: after a quiet spell it still counts
    claims(quiet, 'a', 5, 12, NOW - 1_500); // claims made since, but it claimed 500 ms before them
    expect(quiet.allowance(NOW - 1_500)).toBe(0);
    expect(quiet.allowance(NOW)).toBe(Infinity); // nothing from it for 2 s while others claimed: it no longer counts
  });

  it('remembers when another node last claimed, not when this one did', () => {
    const shares = new ClaimShares('a', 8);
    expect(shares.lastOthersClaim).toBe(-Infinity);
    shares.heard('t:1', 1, 'b', 100);
    shares.heard('t:2', 1, 'a', 200);
    shares.heard('t:3', 1, 'c', 150); // heard late, out of order
    expect(shares.lastOthersClaim).toBe(150);
  });

  it('a claim told again (a renewal, an event repeated) does not make the others look busy', () => {
    const shares = new ClaimShares('a', 64, 1);
    shares.heard('t:long', 3, 'b', NOW);
    expect(shares.lastOthersClaim).toBe(NOW);
    shares.heard('t:long', 3, 'b', NOW + 500);
    expect(shares.lastOthersClaim).toBe(NOW);
  });
});
