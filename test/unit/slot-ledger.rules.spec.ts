import { emptyHistory, type JobHistory, type SlotRange } from '../../lib/schedules/job-history';
import { judgeSlots, SLOTS_KEPT, type SlotCalendar } from '../../lib/schedules/slot-ledger.rules';
import type { RunRecord } from '../../lib/schedules/run-record';

/** Fires every 10 ms from 0: instants 0, 10, 20, ... */
const every10: SlotCalendar = {
  next: (from, count) => Array.from({ length: count }, (_, i) => (Math.floor(from / 10) + 1 + i) * 10),
  firesBetween: (after, before, cap = 10_000) => {
    let count = 0;
    let last: number | undefined;
    for (let at = (Math.floor(after / 10) + 1) * 10; at < before && count < cap; at += 10) {
      count++;
      last = at;
    }
    return { count, last };
  },
};
const run = (instant: number): RunRecord => ({ id: `r${instant}`, job: 'j', trigger: 'schedule', instant, node: 'a', instance: 'a', token: instant, startedAt: instant, outcome: 'completed', durationMs: 1 });
const note = (verdict: SlotRange['verdict'], first: number, last: number): SlotRange => ({ verdict, first, last, count: (last - first) / 10 + 1, node: 'b' });
const history = (over: Partial<JobHistory>): JobHistory => ({ ...emptyHistory('j'), ...over });

describe('the slot ledger (judgeSlots)', () => {
  it('judges every settled instant without a run or a note missed, once: a later write judges none of them again', () => {
    const first = history({ runs: [run(10)] });
    const a = judgeSlots(undefined, first, [], every10, 15, 'a');
    expect(a.news).toEqual({});
    expect(a.history.judgedThrough).toBe(10); // the last fire judged
    // Instants 20..50 pass with nothing; 60 ran. Settled before 65: 20, 30, 40, 50 missed.
    const b = judgeSlots(a.history, { ...a.history, runs: [run(60), run(10)] }, [], every10, 65, 'b');
    expect(b.news).toEqual({ missed: { instants: [20, 30, 40, 50], count: 4 } });
    expect(b.history.slots).toEqual([{ verdict: 'missed', first: 20, last: 50, count: 4, node: 'b' }]);
    expect(b.history.missed).toEqual({ count: 4, last: 50 });
    // Another node's write on top of it (its own run, a little later) says nothing more.
    const c = judgeSlots(b.history, { ...b.history, runs: [run(70), run(60), run(10)] }, [], every10, 75, 'c');
    expect(c.news).toEqual({});
    expect(c.history.missed.count).toBe(4);
  });

  it('does not judge an instant before it settled: a run written late still counts as ran', () => {
    const a = judgeSlots(undefined, history({ runs: [run(10)] }), [], every10, 15, 'a');
    const b = judgeSlots(a.history, { ...a.history, runs: [run(30), run(10)] }, [], every10, 19, 'b'); // 20 not settled yet
    expect(b.news).toEqual({});
    const c = judgeSlots(b.history, { ...b.history, runs: [run(20), run(30), run(10)] }, [], every10, 35, 'c');
    expect(c.news).toEqual({});
  });

  it('remembers runs ahead of the judged instants after they are trimmed from the runs kept', () => {
    const a = judgeSlots(undefined, history({ runs: [run(10), run(20), run(30)] }), [], every10, 15, 'a');
    expect(a.history.ranAhead).toEqual([10, 20, 30]);
    const b = judgeSlots(a.history, { ...a.history, runs: [run(40)] }, [], every10, 45, 'b');
    expect(b.news).toEqual({});
  });

  it('takes noted skips as their verdicts, not missed: paused and overlap', () => {
    const a = judgeSlots(undefined, history({ runs: [run(10)] }), [], every10, 15, 'a');
    const b = judgeSlots(a.history, { ...a.history, runs: [run(60)] }, [note('paused', 20, 40), note('overlap', 50, 50)], every10, 65, 'b');
    expect(b.news).toEqual({});
    expect(b.history.slots).toEqual(expect.arrayContaining([note('paused', 20, 40), note('overlap', 50, 50)]));
  });

  it('says a streak of no eligible node once, however many nodes note it', () => {
    const a = judgeSlots(undefined, history({}), [note('noEligibleNode', 10, 30)], every10, 5, 'a');
    expect(a.news).toEqual({ noEligibleNode: { since: 10 } });
    const b = judgeSlots(a.history, a.history, [{ ...note('noEligibleNode', 20, 50), node: 'c' }], every10, 45, 'c');
    expect(b.news).toEqual({});
    expect(b.history.slots).toEqual([{ verdict: 'noEligibleNode', first: 10, last: 50, count: 5, node: 'b' }]);
  });

  it('judges a long gap as one range and names its oldest instants; keeps the newest ranges only', () => {
    const a = judgeSlots(undefined, history({ runs: [run(10)] }), [], every10, 15, 'a');
    const b = judgeSlots(a.history, a.history, [], every10, 100_015, 'b');
    expect(b.news.missed?.count).toBe(10_000);
    expect(b.news.missed?.instants).toHaveLength(100);
    expect(b.history.slots).toHaveLength(1);
    let h = b.history;
    for (let i = 0; i < SLOTS_KEPT + 5; i++) {
      const at = 200_000 + i * 100;
      h = judgeSlots(h, { ...h, runs: [run(at + 10)] }, [note('overlap', at, at)], every10, at + 5, 'x').history;
    }
    expect(h.slots!.length).toBe(SLOTS_KEPT);
  });

  it('does not judge the instants of an old schedule by a new one: after an edit, only from the edit on', () => {
    const hourly = { ...every10, expression: '0 * * * *', timeZone: 'UTC' };
    const minutely = { ...every10, expression: '* * * * *', timeZone: 'UTC' };
    const a = judgeSlots(undefined, history({ runs: [run(10)] }), [], hourly, 15, 'a');
    expect(a.history.schedule).toBe('0 * * * * UTC');
    // The new schedule fires at 20..50 by its own reckoning; nothing ran them under the old one: not judged missed.
    const b = judgeSlots(a.history, { ...a.history, runs: [run(60), run(10)] }, [], minutely, 55, 'b');
    expect(b.news).toEqual({});
    expect(b.history.schedule).toBe('* * * * * UTC');
    // From then on it judges by the new one.
    const c = judgeSlots(b.history, b.history, [], minutely, 85, 'c');
    expect(c.news).toEqual({ missed: { instants: [70, 80], count: 2 } });
  });

  it('steps through instants that ran on the calendar\'s grid with no cron calculation, and still finds a gap', () => {
    let calculations = 0;
    const grid: SlotCalendar = { ...every10, gridMs: 10, next: (from, count) => (calculations++, every10.next(from, count)) };
    const a = judgeSlots(undefined, history({ runs: [run(10)] }), [], grid, 15, 'a');
    const before = calculations;
    const b = judgeSlots(a.history, { ...a.history, runs: [run(20), run(30), run(40), run(10)] }, [], grid, 45, 'b');
    expect(b.news).toEqual({});
    expect(calculations - before).toBe(0);
    const c = judgeSlots(b.history, { ...b.history, runs: [run(60), run(40)] }, [], grid, 65, 'c');
    expect(c.news).toEqual({ missed: { instants: [50], count: 1 } });
  });
});

