import { ClaimShares } from '../../lib/tasks/claim-shares';

/** `count` claims by `instance`, each of its own task. */
function claims(shares: ClaimShares, instance: string, count: number, from = 0): void {
  for (let i = from; i < from + count; i++) shares.heard(`t:${instance}-${i}`, 1, instance, 0);
}

describe('ClaimShares: who made the recent claims, and how much work a node may take now', () => {
  it('remembers when another node last claimed, not when this one did', () => {
    const shares = new ClaimShares('a', 8);
    expect(shares.lastOthersClaim).toBe(-Infinity);
    shares.heard('t:1', 1, 'b', 100);
    shares.heard('t:2', 1, 'a', 200);
    shares.heard('t:3', 1, 'c', 150); // heard late, out of order
    expect(shares.lastOthersClaim).toBe(150);
  });

  it('a node that heard no other node claim never holds back, whatever it took itself', () => {
    const shares = new ClaimShares('a', 8);
    expect(shares.allowance()).toBe(Infinity);
    claims(shares, 'a', 20);
    expect(shares.allowance()).toBe(Infinity);
  });

  it('allows one claim past an even share of the window: a node behind catches up, one ahead waits', () => {
    const shares = new ClaimShares('a', 64);
    claims(shares, 'b', 3);
    claims(shares, 'c', 3);
    expect(shares.allowance()).toBe(4); // 0 of 6 with three nodes: (0 + 4) * 3 <= 6 + 4 + 3
    claims(shares, 'a', 3);
    expect(shares.allowance()).toBe(1); // even: one more
    claims(shares, 'a', 2, 3);
    expect(shares.allowance()).toBe(0); // 5 of 11: ahead, leaves fresh work to the others
  });

  it('of nodes that heard the same claims, one may always claim (they cannot all be past an even share)', () => {
    for (const [a, b, c] of [[10, 10, 10], [20, 5, 5], [1, 30, 2], [0, 0, 7], [21, 21, 22]]) {
      const heard = ['a', 'b', 'c'].map((self) => new ClaimShares(self, 64));
      for (const shares of heard) {
        claims(shares, 'a', a);
        claims(shares, 'b', b);
        claims(shares, 'c', c);
      }
      expect(Math.max(...heard.map((s) => s.allowance()))).toBeGreaterThan(0);
    }
  });

  it('counts a claim told twice (a renewal, its own landing and then its event) once, and a new epoch anew', () => {
    const shares = new ClaimShares('a', 64);
    claims(shares, 'b', 2);
    shares.heard('t:x', 5, 'a', 0);
    shares.heard('t:x', 5, 'a', 0);
    shares.heard('t:x', 5, 'a', 0);
    expect(shares.allowance()).toBe(3); // own 1 of 3 with two nodes: (1 + 3) * 2 <= 3 + 3 + 2
    shares.heard('t:x', 6, 'a', 0); // claimed again after a lapse: a claim of its own
    expect(shares.allowance()).toBe(2);
  });

  it('forgets a node once `size` newer claims were made without it (it died, or has no free slot)', () => {
    const shares = new ClaimShares('a', 8);
    claims(shares, 'dead', 4);
    claims(shares, 'a', 4);
    expect(shares.allowance()).toBe(2);
    claims(shares, 'a', 3, 4);
    expect(shares.allowance()).toBe(0); // 7 of 8 with the dead node still counted
    claims(shares, 'a', 1, 7);
    expect(shares.allowance()).toBe(Infinity); // the window holds only its own claims: alone again
  });
});
