import { ClaimWindows, type RankedSource } from '../../lib/store/tasks/claim-windows';
import type { TaskRecord } from '../../lib/store/tasks/task';
import { compareReady } from '../../lib/store/tasks/task-store.rules';
import { rankCeiling, rankFloor, rankOf } from '../../lib/store/tasks/task-rank.rules';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';

/**
 * A ranked source over tasks held in memory that counts what each question would cost the members: the tasks its
 * range holds (an index range costs what it holds, a count as much as a fetch in index entries).
 */
function rankedTasks(tasks: TaskRecord[]) {
  const ranked = tasks.map((task) => ({ task, rank: rankOf(task) })).sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : compareReady(a.task, b.task)));
  const gone = new Set<string>();
  const costs: number[] = [];
  const range = (above: string | undefined, upTo: string) => ranked.filter((t) => !gone.has(t.task.id) && (above === undefined ? t.rank >= rankFloor('bk') : t.rank > above) && t.rank <= upTo);
  const held = <T>(found: T[]): T[] => {
    costs.push(found.length);
    return found;
  };
  const source: RankedSource = {
    fetch: async (_type, above, upTo) => held(range(above, upTo)).map((t) => t.task),
    count: async (_type, above, upTo) => held(range(above, upTo)).length,
    lowestAbove: async (_type, above) => held(range(above ?? rankFloor('bk'), rankCeiling('bk')))[0]?.rank,
  };
  return { source, costs, claim: (found: TaskRecord[]) => found.forEach((t) => gone.add(t.id)), waiting: () => ranked.filter((t) => !gone.has(t.task.id)).map((t) => t.task) };
}

describe('claim windows', () => {
  it('read about a batch per search, in claim order, from a backlog whose seqs bunch by the millisecond with pauses', async () => {
    // A submitter's seqs as TaskSubmits gives them (µs of the clock, +1 within a millisecond), ~20 a millisecond,
    // pausing now and then: windows sized from the density seen land in gaps and in bunches alike.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let ms = 1_700_000_000_000;
    let seq = 0;
    const tasks = Array.from({ length: 30_000 }, (_, i) => {
      if (random() < 0.05) ms += random() < 0.02 ? Math.floor(random() * 50) : 1;
      seq = Math.max(ms * 1000, seq + 1);
      return decideSubmit(undefined, { type: 'bk', name: `t${i}`, seq }, ms, 60_000).task;
    });
    const backlog = rankedTasks(tasks);
    const windows = new ClaimWindows();
    const limit = 256;
    const searches: Array<{ cost: number; calls: number }> = [];
    for (let search = 0; search < 60; search++) {
      backlog.costs.length = 0;
      const found = await windows.first(backlog.source, 'bk', limit);
      expect(found.map((t) => t.id)).toEqual(backlog.waiting().slice(0, limit).map((t) => t.id));
      // The first search of a backlog asks for its lowest rank (what stands above is read once); every search after
      // it costs the members a few batches at most, in a few calls.
      if (search > 0) searches.push({ cost: backlog.costs.reduce((a, b) => a + b, 0), calls: backlog.costs.length });
      backlog.claim(found);
    }
    expect(Math.max(...searches.map((s) => s.cost))).toBeLessThanOrEqual(16 * limit);
    expect(Math.max(...searches.map((s) => s.calls))).toBeLessThanOrEqual(16);
  });
});
