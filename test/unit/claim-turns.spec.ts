import { ClaimTurns } from '../../lib/tasks/claim-turns';

const T0 = 1_000_000;
const settledAt = () => Promise.resolve();

/** `count` claims by `instance` heard at `at`, each of its own task (numbered from `from`). */
function claims(turns: ClaimTurns, instance: string, count: number, at: number, from = 0): boolean[] {
  return Array.from({ length: count }, (_, i) => turns.heard(`t:${instance}-${from + i}`, { epoch: 1, instance, claimedAt: at }, at));
}

describe('ClaimTurns: when a node may claim, so that nodes take turns in a burst', () => {
  it('a node alone claims as much as it likes, and never waits', async () => {
    const turns = new ClaimTurns('a', 4);
    claims(turns, 'a', 100, T0);
    expect(await turns.turn(() => T0, settledAt)).toBe(Infinity);
    expect(turns.wakeAt()).toBeUndefined();
  });

  it('past its share it waits while the others claim, and the claim that gives it room says so (wake it)', async () => {
    const turns = new ClaimTurns('a', 4);
    claims(turns, 'b', 10, T0);
    claims(turns, 'a', 30, T0); // 30 of 40 with two nodes: past 20 + 8
    expect(await turns.turn(() => T0 + 10, settledAt)).toBe(0);
    expect(turns.wakeAt()).toBe(T0 + 50); // the others' last claim + 50 ms, if none wakes it first
    const woke = claims(turns, 'b', 6, T0 + 20, 10);
    expect(woke.slice(0, 4)).toEqual([false, false, false, false]); // 30 of 41 to 44: no room (30 + 1 > 45 / 2 + 8)
    expect(woke[4]).toBe(true); // 30 of 45: room for one
    expect(woke[5]).toBe(false); // told once
    expect(await turns.turn(() => T0 + 20, settledAt)).toBe(2);
  });

  it('once the others were quiet for 50 ms it claims one batch, then waits 50 ms again', async () => {
    const turns = new ClaimTurns('a', 4);
    claims(turns, 'b', 10, T0);
    claims(turns, 'a', 30, T0);
    expect(await turns.turn(() => T0 + 49, settledAt)).toBe(0);
    expect(await turns.turn(() => T0 + 50, settledAt)).toBe(Infinity); // they died, are full, or were not told
    expect(await turns.turn(() => T0 + 51, settledAt)).toBe(0);
    expect(turns.wakeAt()).toBe(T0 + 100);
    expect(await turns.turn(() => T0 + 100, settledAt)).toBe(Infinity);
  });

  it('before it concludes the others are quiet, claims waiting unread are let in: they may say the others are not', async () => {
    const turns = new ClaimTurns('a', 4);
    claims(turns, 'b', 10, T0);
    claims(turns, 'a', 30, T0);
    // Its loop was busy for 80 ms; a claim of b's waited on its socket all along, and is read before the immediate.
    const turn = await turns.turn(() => T0 + 80, async () => claims(turns, 'b', 1, T0 + 80, 100));
    expect(turn).toBe(0);
    expect(turns.wakeAt()).toBe(T0 + 130);
  });

  it('claims whatever its share once the next task waited 2 s: a slow node that still claims now and then does not slow the others to its pace', async () => {
    const turns = new ClaimTurns('a', 4);
    // b and a took the most, c (its slots taken by long tasks) claims one every 20 ms, so nobody is ever quiet.
    claims(turns, 'a', 120, T0);
    claims(turns, 'b', 120, T0, 1000);
    for (let i = 0; i < 10; i++) claims(turns, 'c', 1, T0 + 20 * i, 2000 + i);
    const now = T0 + 200;
    expect(await turns.turn(() => now, settledAt, now - 500)).toBe(0); // young work: its turn comes as the others claim
    expect(await turns.turn(() => now, settledAt, now - 2_000)).toBe(Infinity); // a backlog: no turns
    expect(turns.wakeAt()).toBeUndefined();
  });

  it('takes a claim heard long after it was made for a renewal: a node busy with long tasks does not keep the others from looking quiet', async () => {
    const turns = new ClaimTurns('a', 4, 500);
    claims(turns, 'b', 10, T0);
    claims(turns, 'a', 30, T0);
    // b renews its long tasks every 20 ms: claims made at T0, heard later.
    for (let i = 1; i <= 10; i++) turns.heard(`t:b-long-${i}`, { epoch: 1, instance: 'b', claimedAt: T0 }, T0 + 1_500 + 20 * i);
    expect(await turns.turn(() => T0 + 1_720, settledAt)).toBe(Infinity); // b claimed nothing new since T0
  });
});
