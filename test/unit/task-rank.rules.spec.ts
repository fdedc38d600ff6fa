import { compareReady } from '../../lib/store/tasks/task-store.rules';
import { dueCeiling, isClaimOrderRank, pointOf, rankAt, rankCeiling, rankFloor, rankOf, storedRankOf } from '../../lib/store/tasks/task-rank.rules';

describe('task ranks', () => {
  const priorities = [-Number.MAX_SAFE_INTEGER, -1_000, -1, 0, -0, 1, 2, 255, 256, 1_000_000, Number.MAX_SAFE_INTEGER];
  const seqs = [-5e15, -1, -0.5, 0, -0, 0.25, 1, 999, 1_000, 1.7e15, 1.7e15 + 1, 2 ** 53 - 1];

  it('sort as strings the way claims are ordered (priority, highest first, then seq), within one type', () => {
    const tasks = priorities.flatMap((priority) => seqs.map((seq) => ({ type: 't', priority, seq, id: `t:${priority}/${seq}` })));
    const byRank = [...tasks].sort((a, b) => (rankOf(a) < rankOf(b) ? -1 : rankOf(a) > rankOf(b) ? 1 : a.id < b.id ? -1 : 1));
    expect(byRank.map((t) => t.id)).toEqual([...tasks].sort(compareReady).map((t) => t.id));
  });

  it('stand for the place they were made from, and each type keeps to its own range', () => {
    for (const priority of priorities) for (const seq of seqs) expect(pointOf('t', rankAt('t', { priority, seq }))).toEqual({ priority: priority || 0, seq: seq || 0 });
    const rank = rankAt('ab', { priority: 0, seq: 1 });
    expect(rank > rankFloor('ab') && rank < rankCeiling('ab')).toBe(true);
    // A type that another type's name starts with: neither range holds the other's ranks (types hold no ':').
    expect(rank > rankFloor('a') && rank < rankCeiling('a')).toBe(false);
    expect(rankAt('a#group-finished', { priority: 0, seq: 1 }) < rankFloor('a')).toBe(true);
  });

  it('keep a task that waits apart from claim order, above it and within its type, in the order it comes due', () => {
    const task = { type: 'ab', priority: 0, seq: 1.7e15, submittedAt: 1_700_000_000_000, notBefore: 1_700_000_000_000 };
    expect(storedRankOf(task)).toBe(rankOf(task));
    const soon = storedRankOf({ ...task, notBefore: task.submittedAt + 1 });
    const late = storedRankOf({ ...task, priority: 99, notBefore: task.submittedAt + 60_000 });
    const highest = rankAt('ab', { priority: -Number.MAX_SAFE_INTEGER, seq: Number.MAX_SAFE_INTEGER });
    expect([highest < rankCeiling('ab'), rankCeiling('ab') < soon, soon < late, late < rankFloor('ab;'), late < rankFloor('abc')]).toEqual([true, true, true, true, true]);
    expect([soon <= dueCeiling('ab', task.submittedAt), soon <= dueCeiling('ab', task.submittedAt + 1), late <= dueCeiling('ab', task.submittedAt + 59_999)]).toEqual([false, true, false]);
    expect([isClaimOrderRank('ab', rankOf(task)), isClaimOrderRank('ab', soon), isClaimOrderRank('ab', undefined)]).toEqual([true, false, false]);
  });
});
