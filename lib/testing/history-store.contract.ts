import assert from 'node:assert/strict';
import { ManualClock } from '../core/clock';
import type { HistoryStore } from '../schedules/history-store';
import { HistoryRecorder } from '../schedules/history-recorder';
import { readableHistory } from '../schedules/job-history.rules';
import { emptyHistory } from '../schedules/job-history';
import { assertEqual, assertMatch } from './assertions';
import { fixtureEachTest, testApi, type ContractOptions } from './test-api';

/** What {@link describeHistoryStoreContract} is given for each test: two run history stores on one backend (two nodes). */
export interface HistoryStoreFixture {
  /** Two stores on one store's data, as two nodes have; the suite connects and closes them. */
  readonly stores: readonly [HistoryStore, HistoryStore];
  /** Called after each test, once the stores are closed (drop what the test wrote). */
  close(): Promise<void>;
}

/**
 * What every run history store must do, run against each implementation, with the recorder that merges into it.
 * {@link describeStoreContracts} runs it on the `HistoryRecordStore` of a backend.
 */
export function describeHistoryStoreContract(name: string, setup: () => Promise<HistoryStoreFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;

  describe(`HistoryStore contract: ${name}`, () => {
    const fixture = fixtureEachTest({ beforeEach, afterEach }, setup);

    it('writes by compare-and-set: the first write of an absent entry, then only on the text read', async () => {
      const [a, b] = fixture().stores;
      assert.equal(await a.read('billing'), undefined);
      const first = await a.write('billing', undefined, { ...emptyHistory('billing'), revision: 1, updatedAt: 1 });
      assert.equal(first?.history.revision, 1);
      // A second "first write" loses: the entry is there now.
      assert.equal(await b.write('billing', undefined, { ...emptyHistory('billing'), revision: 1, updatedAt: 2 }), undefined);
      const read = await b.read('billing');
      assert.equal(read?.raw, first?.raw);
      assert.notEqual(await b.write('billing', read, { ...read!.history, revision: 2 }), undefined);
      // `a` still names the text it wrote, which is gone: its write conflicts.
      assert.equal(await a.write('billing', first, { ...first!.history, revision: 2, updatedAt: 3 }), undefined);
      assert.equal((await a.read('billing'))?.history.revision, 2);
      await a.remove('billing');
      assert.equal(await b.read('billing'), undefined);
    }, timeoutMs);

    it('reads several jobs in one call, as a single read would, leaving out jobs with no history', async () => {
      const [a, b] = fixture().stores;
      const billing = await a.write('billing', undefined, { ...emptyHistory('billing'), revision: 1, updatedAt: 1 });
      const reports = await a.write('reports', undefined, { ...emptyHistory('reports'), revision: 4, updatedAt: 2 });
      assert.ok(b.readMany, 'the store reads many jobs in one call');
      const before = b.operationCount();
      const read = await b.readMany(['billing', 'never-ran', 'reports']);
      assert.equal(b.operationCount() - before, 1);
      assert.deepEqual([...read.keys()].sort(), ['billing', 'reports']);
      assertEqual(read.get('billing'), await b.read('billing'));
      assert.equal(read.get('reports')?.raw, reports?.raw);
      // What it read is what a compare-and-set names.
      assert.notEqual(await b.write('billing', read.get('billing'), { ...billing!.history, revision: 2 }), undefined);
      assert.deepEqual(await b.readMany([]), new Map());
    }, timeoutMs);

    it('keeps every node its own skipped-ticks record', async () => {
      const [a, b] = fixture().stores;
      await a.writeTicks({ instance: 'a/1', node: 'a', since: 1, updatedAt: 2, skipped: { 'Jobs.tick': { NO_PERMIT_AVAILABLE: 3 } } }, 60_000);
      await b.writeTicks({ instance: 'b/1', node: 'b', since: 1, updatedAt: 2, skipped: { 'Jobs.tick': { PAUSED: 1 } } }, 60_000);
      await a.writeTicks({ instance: 'a/1', node: 'a', since: 1, updatedAt: 3, skipped: { 'Jobs.tick': { NO_PERMIT_AVAILABLE: 5 } } }, 60_000);
      const ticks = (await b.readTicks()).sort((x, y) => x.instance.localeCompare(y.instance));
      assertEqual(ticks.map((t) => [t.instance, t.skipped['Jobs.tick']]), [['a/1', { NO_PERMIT_AVAILABLE: 5 }], ['b/1', { PAUSED: 1 }]]);
    }, timeoutMs);

    it('loses no run when two nodes write one job at once, and keeps the newest runs only', async () => {
      const clock = new ManualClock(1_000_000);
      const recorders = fixture().stores.map((store, i) => new HistoryRecorder(store, {
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
      const history = (await fixture().stores[0].read('report'))!.history;
      assert.equal(history.runs.length, 15);
      assertEqual(history.counts, { completed: 20, failed: 4 });
      assert.equal(history.runs[0].startedAt, clock.now());
      assert.equal(history.lastFailure?.error, 'boom');
      assert.equal(history.lastInstant, clock.now());
    }, timeoutMs);

    it('keeps runs under one token that start in the same millisecond apart (calls of a @LeaderOnly method, a catch-up and its tick)', async () => {
      const clock = new ManualClock(7_000_000);
      const recorder = new HistoryRecorder(fixture().stores[0], {
        keep: 10, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: 'n0/1', node: 'n0' }, clock,
      });
      const job = 'leader:reports:ReportSender.send';
      const first = recorder.started({ job, trigger: 'call', token: 3 });
      const second = recorder.started({ job, trigger: 'call', token: 3 });
      recorder.finished(first, 'completed', 0);
      recorder.finished(second, 'failed', 0, 'no recipients');
      await recorder.flush();
      const history = (await fixture().stores[1].read(job))!.history;
      assert.deepEqual(history.runs.map((r) => r.outcome).sort(), ['completed', 'failed']);
      assertEqual(history.counts, { completed: 1, failed: 1 });
    }, timeoutMs);

    it("keeps a failed run's stack, bounded (20 frames, 2,000 characters), for another node to read; a message alone has none", async () => {
      const clock = new ManualClock(8_000_000);
      const recorder = new HistoryRecorder(fixture().stores[0], {
        keep: 10, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: 'n0/1', node: 'n0' }, clock,
      });
      const deep = new Error('ledger out of balance');
      deep.stack = ['Error: ledger out of balance', ...Array.from({ length: 30 }, (_, i) => `    at step${i} (/app/dist/ledger.js:${i + 1}:7)`)].join('\n');
      recorder.finished(recorder.started({ job: 'ledger', trigger: 'schedule', instant: clock.now(), token: 4 }), 'failed', 3, deep);
      clock.advance(1);
      recorder.finished(recorder.started({ job: 'ledger', trigger: 'manual', token: 4 }), 'failed', 3, 'a message alone');
      await recorder.flush();
      const history = (await fixture().stores[1].read('ledger'))!.history;
      const [alone, thrown] = history.runs;
      assert.equal(thrown.error, 'ledger out of balance');
      assert.equal(thrown.stack!.split('\n').filter((line) => line.startsWith('    at ')).length, 20);
      assert.match(thrown.stack!, /^Error: ledger out of balance\n {4}at step0 \(\/app\/dist\/ledger\.js:1:7\)\n[\s\S]*step19[\s\S]*\n {4}\.\.\. 10 more frames$/);
      assert.equal(alone.error, 'a message alone');
      assert.equal(alone.stack, undefined);
      assert.equal(history.lastFailure?.error, 'a message alone');
    }, timeoutMs);

    it('keeps the newest `keep` runs of many that waited for one flush, counts the rest, and never drops one still running', async () => {
      const clock = new ManualClock(9_000_000);
      const recorder = new HistoryRecorder(fixture().stores[0], {
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
      const history = (await fixture().stores[1].read(job))!.history;
      // `keep` runs waited: the one still running and the two newest ended ones.
      assert.deepEqual(history.runs.map((r) => [r.startedAt, r.outcome]), [
        [starts[7], 'completed'], [starts[6], 'completed'], [long.startedAt, 'running'],
      ]);
      assertEqual(history.counts, { completed: 7, failed: 1 });
      assertMatch(history.lastFailure, { startedAt: starts[1], error: 'relay down' });
      assert.deepEqual(recorder.unwritten(job).map((r) => r.id), [long.id]);
    }, timeoutMs);

    it('shows a run left running by a node that was taken over as unknown', async () => {
      const clock = new ManualClock(5_000_000);
      const [a, b] = fixture().stores.map((store, i) => new HistoryRecorder(store, {
        keep: 10, flushIntervalMs: 60_000, callTimeoutMs: 10_000, identity: { instance: `n${i}/1`, node: `n${i}` }, clock,
      }));
      a.started({ job: 'sweep', trigger: 'schedule', instant: clock.now(), token: 7 });
      await a.flush(); // the node dies here: its run stays "running"
      clock.advance(60_000);
      b.finished(b.started({ job: 'sweep', trigger: 'schedule', instant: clock.now(), token: 8 }), 'completed', 12);
      await b.flush();
      const runs = readableHistory((await fixture().stores[0].read('sweep'))!.history).runs;
      assert.deepEqual(runs.map((r) => [r.token, r.outcome]), [[8, 'completed'], [7, 'unknown']]);
    }, timeoutMs);
  });
}
