import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gaps, summarize } from './bounds';
import { checkHistory } from './checker';
import { checkMissed } from './alerts';
import { appendEvent, readHistory, type EditEvent, type HistoryEvent, type RunEvent, type SignalEvent } from './history';

interface RunSpec {
  node: string;
  token: number;
  at: number;
  semaphore?: string;
  job?: string;
  pid?: number;
  tick?: number;
  grantedAt?: number;
  valid?: boolean;
  validFor?: number;
  effects?: number[];
  abortAt?: number;
  signalAt?: number;
  endAt?: number;
}

/** The events one workload run writes, in its own order. */
function run(spec: RunSpec): RunEvent[] {
  const { node, token, at, semaphore = 'billing', job = 'billing', pid = node.length * 1000 + token, tick = Math.floor(at / 100) } = spec;
  const base = { node, pid, semaphore, job, token };
  const events: RunEvent[] = [{ ...base, type: 'start', at, tick, validUntil: at + (spec.validFor ?? 1000), valid: spec.valid ?? true, grantedAt: spec.grantedAt }];
  for (const e of spec.effects ?? []) events.push({ ...base, type: 'effect', at: e, valid: true });
  if (spec.signalAt !== undefined) events.push({ ...base, type: 'signal', at: spec.signalAt, reason: 'lost' });
  if (spec.abortAt !== undefined) events.push({ ...base, type: 'abort', at: spec.abortAt, reason: 'expired' });
  if (spec.endAt !== undefined) {
    events.push({ ...base, type: 'end', at: spec.endAt, outcome: spec.abortAt === undefined ? 'done' : 'aborted', valid: spec.abortAt === undefined && spec.signalAt === undefined });
  }
  return events;
}

/** Interleaves several runs' events by time, as one shared file would hold them. */
const history = (...runs: RunEvent[][]): HistoryEvent[] => runs.flat().sort((a, b) => a.at - b.at);
const kinds = (events: HistoryEvent[], options: Parameters<typeof checkHistory>[1] = { permits: 1 }) =>
  checkHistory(events, options).violations.map((v) => v.kind);

describe('checkHistory', () => {
  // A holds token 1 until 900, B takes over with token 2 after expiry and a margin: nothing to report.
  const handover = history(
    run({ node: 'a', token: 1, at: 0, effects: [300, 600, 900], endAt: 950 }),
    run({ node: 'b', token: 2, at: 2000, effects: [2300, 2600], endAt: 2700 }),
  );

  it('finds nothing in a clean handover, and counts runs, handovers and effects', () => {
    const { violations, stats } = checkHistory(handover, { permits: 1 });
    expect(violations).toEqual([]);
    expect(stats).toMatchObject({
      runs: 2, runsPerNode: { a: 1, b: 1 }, handovers: { billing: 1 }, effects: 5, aborted: 0, maxOverlapMs: 0,
    });
  });

  describe('overlap', () => {
    const overlapping = history(
      run({ node: 'a', token: 1, at: 0, effects: [300, 600, 900], endAt: 950 }),
      run({ node: 'b', token: 2, at: 800, effects: [1000], endAt: 1100 }),
    );

    it('reports two holders valid at once, with the overlap in ms', () => {
      const { violations, stats } = checkHistory(overlapping, { permits: 1 });
      expect(violations).toEqual([expect.objectContaining({ kind: 'overlap', semaphore: 'billing', at: 800, overlapMs: 150 })]);
      expect(violations[0].detail).toMatch(/2 leases valid at once for 150 ms/);
      expect(stats.maxOverlapMs).toBe(150);
    });

    it('allows as many holders as permits', () => {
      expect(kinds(overlapping, { permits: { billing: 2 } })).toEqual([]);
    });

    it('ends a run’s validity at its signal or abort, not at its last event', () => {
      const signalled = history(
        run({ node: 'a', token: 1, at: 0, effects: [300], signalAt: 700, abortAt: 900, endAt: 900 }),
        run({ node: 'b', token: 2, at: 800, effects: [1000], endAt: 1100 }),
      );
      expect(kinds(signalled)).toEqual([]);
      const aborted = history(
        run({ node: 'a', token: 1, at: 0, effects: [300], abortAt: 750, endAt: 750 }),
        run({ node: 'b', token: 2, at: 800, effects: [1000], endAt: 1100 }),
      );
      expect(kinds(aborted)).toEqual([]);
    });

    it('counts a holder killed mid-run as valid until its last effect', () => {
      const killed = history(
        run({ node: 'a', token: 1, at: 0, effects: [300, 600] }),
        run({ node: 'b', token: 2, at: 599, endAt: 700 }),
      );
      expect(checkHistory(killed, { permits: 1 }).violations).toEqual([expect.objectContaining({ kind: 'overlap', overlapMs: 1 })]);
      expect(checkHistory(killed, { permits: 1 }).stats.unfinished).toBe(1);
    });

    it('does not count consecutive runs of one holder under one token twice', () => {
      const sameHolder = history(
        run({ node: 'a', pid: 7, token: 1, at: 0, effects: [50], endAt: 100 }),
        run({ node: 'a', pid: 7, token: 1, at: 100, effects: [150], endAt: 200 }),
      );
      expect(kinds(sameHolder)).toEqual([]);
    });
  });

  describe('invalid-start', () => {
    it('reports a run started on an invalid lease', () => {
      expect(kinds(history(run({ node: 'a', token: 1, at: 0, valid: false, endAt: 10 })))).toEqual(['invalid-start']);
    });

    it('reports a run started with less validity left than the margin', () => {
      const late = history(run({ node: 'a', token: 1, at: 0, validFor: 50, endAt: 10 }));
      expect(kinds(late, { permits: 1, startMarginMs: 100 })).toEqual(['invalid-start']);
      expect(kinds(late, { permits: 1, startMarginMs: 20 })).toEqual([]);
    });
  });

  describe('token-order', () => {
    it('reports a new token not above the tokens seen before', () => {
      const backwards = history(
        run({ node: 'a', token: 5, at: 0, endAt: 100 }),
        run({ node: 'b', token: 4, at: 2000, endAt: 2100 }),
      );
      expect(kinds(backwards)).toEqual(['token-order']);
    });

    it('reports one token used by two processes', () => {
      const shared = history(
        run({ node: 'a', pid: 1, token: 5, at: 0, endAt: 100 }),
        run({ node: 'a', pid: 2, token: 5, at: 2000, endAt: 2100 }),
      );
      expect(checkHistory(shared, { permits: 1 }).violations[0].detail).toMatch(/token 5 used by a\/1 and by a\/2/);
    });

    it('orders tokens by grant, not by start: concurrent holders may log their starts in either order', () => {
      const pair = (aGranted: number) => history(
        run({ node: 'a', token: 2, at: 20, grantedAt: aGranted, endAt: 100 }),
        run({ node: 'b', token: 1, at: 30, grantedAt: 10, endAt: 100 }),
      );
      expect(kinds(pair(12), { permits: 2 })).toEqual([]);
      expect(kinds(pair(5), { permits: 2 })).toEqual(['token-order']);
    });

    it('accepts a token seen again on its holder, and growing tokens', () => {
      const fine = history(
        run({ node: 'a', token: 1, at: 0, endAt: 100 }),
        run({ node: 'a', token: 1, at: 200, endAt: 300 }),
        run({ node: 'b', token: 3, at: 2000, endAt: 2100 }),
      );
      expect(kinds(fine)).toEqual([]);
    });
  });

  describe('duplicate-tick', () => {
    const twice = history(
      run({ node: 'a', token: 1, at: 0, tick: 7, endAt: 10 }),
      run({ node: 'b', token: 2, at: 500, tick: 7, endAt: 510 }),
    );

    it('reports a tick run more times than there are permits', () => {
      expect(kinds(twice)).toEqual(['duplicate-tick']);
    });

    it('allows one run per permit and tick', () => {
      expect(kinds(twice, { permits: 2 })).toEqual([]);
    });

    // A direct call (no cron instant): node-b's call fired with the tick at 700 but was held up past half the
    // 200 ms period (a store restart), so node-a had run the slot and released. On time, the same repeat is reported.
    const repeat = (startAt: number) => history(
      run({ node: 'a', token: 1, at: 705, tick: 3, endAt: 715 }),
      run({ node: 'b', token: 2, at: startAt, tick: 3, endAt: startAt + 10 }),
    ).map((e) => (e.type === 'start' ? { ...e, firedAt: 700, periodMs: 200 } : e));

    it('does not count a repeat decided more than half a period after its tick fired', () => {
      expect(kinds(repeat(993))).toEqual([]);
      expect(kinds(repeat(790))).toEqual(['duplicate-tick']);
    });
  });

  describe('close-starts', () => {
    // A 1 s job: a run decided late at the thaw (tick 9 at 9.676 s), then the next tick's run 324 ms later.
    const late = history(
      run({ node: 'a', token: 1, at: 8_000, tick: 8, endAt: 8_100 }),
      run({ node: 'b', token: 2, at: 9_676, tick: 9, grantedAt: 9_676, endAt: 9_700 }),
      run({ node: 'b', token: 2, at: 10_000, tick: 10, endAt: 10_100 }),
      run({ node: 'b', token: 2, at: 10_020, job: 'other', tick: 10, endAt: 10_030 }),
    );

    it('reports two starts of one job closer than the gap asked for, on one node or two, and measures the smallest', () => {
      const { violations, stats } = checkHistory(late, { permits: 1, minStartGapMs: 500 });
      expect(violations.map((v) => [v.kind, v.at])).toEqual([['close-starts', 10_000]]);
      expect(violations[0].detail).toContain('324 ms later');
      expect(stats.smallestStartGapMs).toEqual({ 'billing/billing': 324 });
      expect(kinds(late, { permits: 1, minStartGapMs: { billing: 300 } })).toEqual([]);
    });

    it('is not checked unless asked', () => {
      expect(kinds(late)).toEqual([]);
    });
  });

  describe('lost-edit', () => {
    const edit = (op: string, semaphore: string, args: unknown[], ok = true): EditEvent =>
      ({ type: 'edit', op, semaphore, args, ok, at: 10, startedAt: 5, node: 'operator', pid: 1 });
    const edits = [edit('update', 'a', [{ permits: 3 }]), edit('update', 'b', [{ permits: 4 }]), edit('update', 'c', [{ permits: 9 }], false)];
    const applied = { update: (e: EditEvent, final: unknown) => (final as { permits: number }).permits === (e.args[0] as { permits: number }).permits };

    it('reports an ok edit whose effect is not in the final state', () => {
      const { violations, stats } = checkHistory(edits, { permits: 1, edits: { final: { a: { permits: 3 }, b: { permits: 1 }, c: { permits: 1 } }, applied } });
      expect(violations).toEqual([expect.objectContaining({ kind: 'lost-edit', semaphore: 'b' })]);
      expect(stats.edits).toEqual({ ok: 2, failed: 1, unchecked: 0 });
    });

    it('finds nothing when every ok edit is in the final state, and skips ops without a predicate', () => {
      const final = { a: { permits: 3 }, b: { permits: 4 }, c: { permits: 1 } };
      expect(kinds([...edits, edit('pause', 'a', [])], { permits: 1, edits: { final, applied } })).toEqual([]);
      expect(checkHistory([edit('pause', 'a', [])], { permits: 1, edits: { final, applied } }).stats.edits.unchecked).toBe(1);
    });
  });

  it('measures the gap from each edit to the holder’s next signal', () => {
    const events = history(
      run({ node: 'a', token: 1, at: 0, effects: [100], signalAt: 450, endAt: 460 }),
      run({ node: 'a', token: 1, at: 1000, effects: [1100], endAt: 1200 }),
    );
    events.push({ type: 'edit', op: 'pause', semaphore: 'billing', args: [], ok: true, at: 400, startedAt: 390, node: 'operator', pid: 1 });
    events.push({ type: 'edit', op: 'resume', semaphore: 'billing', args: [], ok: true, at: 900, startedAt: 890, node: 'operator', pid: 1 });
    const found = gaps(events, (e): e is EditEvent => e.type === 'edit', (e, edit): e is SignalEvent => e.type === 'signal' && e.semaphore === edit.semaphore);
    expect(found.map((g) => g.ms)).toEqual([50, undefined]);
    expect(summarize(found)).toEqual({ count: 2, missing: 1, maxMs: 50, medianMs: 50 });
  });
});

describe('checkMissed (the controls of the missed-slot fault tests)', () => {
  const alert = (node: string, at: number, instant: number): HistoryEvent => ({ type: 'alert', kind: 'missed', job: 'Jobs.tick', node, pid: 1, at, detail: { instant } });
  // Ticks named in seconds: a run for tick 4 ran instant 4000.
  const ran = run({ node: 'a', token: 1, at: 4000, tick: 4, endAt: 4100 });

  it('finds nothing when each instant nobody ran is said once', () => {
    expect(checkMissed([...ran, alert('b', 9000, 6000), alert('c', 9100, 8000)], 'Jobs.tick')).toEqual({ instants: [6000, 8000], violations: [] });
  });

  it('finds an instant said twice (once per replica, as a naive monitor would)', () => {
    expect(checkMissed([alert('b', 9000, 6000), alert('c', 9100, 6000)], 'Jobs.tick').violations).toEqual([expect.stringContaining('said missed twice: by b and by c')]);
  });

  it('finds an instant said missed that a run started for, unless its process was killed before it could write', () => {
    expect(checkMissed([...ran, alert('b', 9000, 4000)], 'Jobs.tick').violations).toEqual([expect.stringContaining('but a run started for it')]);
    const killed = { at: new Map([[ran[0].pid, 4200]]), recordMs: 500 };
    expect(checkMissed([...ran, alert('b', 9000, 4000)], 'Jobs.tick', killed).violations).toEqual([]);
  });
});

describe('history files', () => {
  it('round-trips events and skips a torn last line', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gatekeeper-history-')), 'history.jsonl');
    const written = appendEvent(file, { type: 'nemesis', action: 'freeze', target: 'node-a' }, 'nemesis');
    appendFileSync(file, '{"type":"start","at":');
    expect(readHistory(file)).toEqual([written]);
    expect(written).toMatchObject({ node: 'nemesis', pid: process.pid, type: 'nemesis' });
  });
});
