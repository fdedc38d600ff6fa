import type { HistoryStore } from '../../lib/schedules/history-store';
import { HistoryRecorder } from '../../lib/schedules/history-recorder';
import { readableHistory } from '../../lib/schedules/job-history.rules';
import { emptyHistory } from '../../lib/schedules/job-history';
import { ManualClock } from '../../lib/testing';

/** Two stores on one backend (two nodes). */
export interface HistoryStoreFixture {
  stores: [HistoryStore, HistoryStore];
  close(): Promise<void>;
}

/** What every run history store must do, run against each implementation. */
export function describeHistoryStoreContract(name: string, setup: () => Promise<HistoryStoreFixture>): void {
  describe(`HistoryStore contract: ${name}`, () => {
    let fixture: HistoryStoreFixture;
    beforeEach(async () => {
      fixture = await setup();
      await Promise.all(fixture.stores.map((s) => s.connect()));
    });
    afterEach(async () => {
      await Promise.all(fixture.stores.map((s) => s.close()));
      await fixture.close();
    });

    it('writes by compare-and-set: the first write of an absent entry, then only on the text read', async () => {
      const [a, b] = fixture.stores;
      expect(await a.read('billing')).toBeUndefined();
      const first = await a.write('billing', undefined, { ...emptyHistory('billing'), revision: 1, updatedAt: 1 });
      expect(first?.history.revision).toBe(1);
      // A second "first write" loses: the entry is there now.
      expect(await b.write('billing', undefined, { ...emptyHistory('billing'), revision: 1, updatedAt: 2 })).toBeUndefined();
      const read = await b.read('billing');
      expect(read?.raw).toBe(first?.raw);
      expect(await b.write('billing', read, { ...read!.history, revision: 2 })).toBeDefined();
      // `a` still names the text it wrote, which is gone: its write conflicts.
      expect(await a.write('billing', first, { ...first!.history, revision: 2, updatedAt: 3 })).toBeUndefined();
      expect((await a.read('billing'))?.history.revision).toBe(2);
      await a.remove('billing');
      expect(await b.read('billing')).toBeUndefined();
    });

    it('reads several jobs in one call, as a single read would, leaving out jobs with no history', async () => {
      const [a, b] = fixture.stores;
      const billing = await a.write('billing', undefined, { ...emptyHistory('billing'), revision: 1, updatedAt: 1 });
      const reports = await a.write('reports', undefined, { ...emptyHistory('reports'), revision: 4, updatedAt: 2 });
      const before = b.operationCount();
      const read = await b.readMany!(['billing', 'never-ran', 'reports']);
      expect(b.operationCount() - before).toBe(1);
      expect([...read.keys()].sort()).toEqual(['billing', 'reports']);
      expect(read.get('billing')).toEqual(await b.read('billing'));
      expect(read.get('reports')?.raw).toBe(reports?.raw);
      // What it read is what a compare-and-set names.
      expect(await b.write('billing', read.get('billing'), { ...billing!.history, revision: 2 })).toBeDefined();
      expect(await b.readMany!([])).toEqual(new Map());
    });

    it('keeps every node its own skipped-ticks record', async () => {
      const [a, b] = fixture.stores;
      await a.writeTicks({ instance: 'a/1', node: 'a', since: 1, updatedAt: 2, skipped: { 'Jobs.tick': { NO_PERMIT_AVAILABLE: 3 } } }, 60_000);
      await b.writeTicks({ instance: 'b/1', node: 'b', since: 1, updatedAt: 2, skipped: { 'Jobs.tick': { PAUSED: 1 } } }, 60_000);
      await a.writeTicks({ instance: 'a/1', node: 'a', since: 1, updatedAt: 3, skipped: { 'Jobs.tick': { NO_PERMIT_AVAILABLE: 5 } } }, 60_000);
      const ticks = (await b.readTicks()).sort((x, y) => x.instance.localeCompare(y.instance));
      expect(ticks.map((t) => [t.instance, t.skipped['Jobs.tick']])).toEqual([['a/1', { NO_PERMIT_AVAILABLE: 5 }], ['b/1', { PAUSED: 1 }]]);
    });

    it('loses no run when two nodes write one job at once, and keeps the newest runs only', async () => {
      const clock = new ManualClock(1_000_000);
      const recorders = fixture.stores.map((store, i) => new HistoryRecorder(store, {
        keep: 15, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: `n${i}/1`, node: `n${i}` }, clock,
      }));
      for (let round = 0; round < 4; round++) {
        for (const [i, recorder] of recorders.entries()) {
          for (let k = 0; k < 3; k++) {
            clock.advance(10);
            const run = recorder.started({ job: 'report', trigger: 'schedule', instant: clock.now(), token: round * 10 + i });
            recorder.finished(run, k === 2 && i === 1 ? 'failed' : 'completed', 5, k === 2 && i === 1 ? 'boom' : undefined);
          }
        }
        // Both write at once: one wins the compare-and-set, the other reads it and merges again.
        await Promise.all(recorders.map((r) => r.flush()));
      }
      const history = (await fixture.stores[0].read('report'))!.history;
      expect(history.runs).toHaveLength(15);
      expect(history.counts).toEqual({ completed: 20, failed: 4 });
      expect(history.runs[0].startedAt).toBe(clock.now());
      expect(history.lastFailure?.error).toBe('boom');
      expect(history.lastInstant).toBe(clock.now());
    });

    it('keeps runs under one token that start in the same millisecond apart (calls of a @LeaderOnly method, a catch-up and its tick)', async () => {
      const clock = new ManualClock(7_000_000);
      const recorder = new HistoryRecorder(fixture.stores[0], {
        keep: 10, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: 'n0/1', node: 'n0' }, clock,
      });
      const job = 'leader:reports:ReportSender.send';
      const first = recorder.started({ job, trigger: 'call', token: 3 });
      const second = recorder.started({ job, trigger: 'call', token: 3 });
      recorder.finished(first, 'completed', 0);
      recorder.finished(second, 'failed', 0, 'no recipients');
      await recorder.flush();
      const history = (await fixture.stores[1].read(job))!.history;
      expect(history.runs.map((r) => r.outcome).sort()).toEqual(['completed', 'failed']);
      expect(history.counts).toEqual({ completed: 1, failed: 1 });
    });

    it('keeps the newest `keep` runs of many that waited for one flush, counts the rest, and never drops one still running', async () => {
      const clock = new ManualClock(9_000_000);
      const recorder = new HistoryRecorder(fixture.stores[0], {
        keep: 3, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: 'n0/1', node: 'n0' }, clock,
      });
      const job = 'leader:reports:ReportSender.send';
      const long = recorder.started({ job, trigger: 'call', token: 4 }); // still running through it all
      const starts: number[] = [];
      for (let i = 0; i < 8; i++) {
        clock.advance(10);
        const run = recorder.started({ job, trigger: 'call', token: 4 });
        starts.push(run.startedAt);
        recorder.finished(run, i === 1 ? 'failed' : 'completed', 1, i === 1 ? 'relay down' : undefined);
      }
      await recorder.flush();
      const history = (await fixture.stores[1].read(job))!.history;
      // `keep` runs waited: the one still running and the two newest ended ones.
      expect(history.runs.map((r) => [r.startedAt, r.outcome])).toEqual([
        [starts[7], 'completed'], [starts[6], 'completed'], [long.startedAt, 'running'],
      ]);
      expect(history.counts).toEqual({ completed: 7, failed: 1 });
      expect(history.lastFailure).toMatchObject({ startedAt: starts[1], error: 'relay down' });
      expect(recorder.unwritten(job).map((r) => r.id)).toEqual([long.id]);
    });

    it('shows a run left running by a node that was taken over as unknown', async () => {
      const clock = new ManualClock(5_000_000);
      const [a, b] = fixture.stores.map((store, i) => new HistoryRecorder(store, {
        keep: 10, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: `n${i}/1`, node: `n${i}` }, clock,
      }));
      a.started({ job: 'sweep', trigger: 'schedule', instant: clock.now(), token: 7 });
      await a.flush(); // the node dies here: its run stays "running"
      clock.advance(60_000);
      b.finished(b.started({ job: 'sweep', trigger: 'schedule', instant: clock.now(), token: 8 }), 'completed', 12);
      await b.flush();
      const runs = readableHistory((await fixture.stores[0].read('sweep'))!.history).runs;
      expect(runs.map((r) => [r.token, r.outcome])).toEqual([[8, 'completed'], [7, 'unknown']]);
    });
  });
}
