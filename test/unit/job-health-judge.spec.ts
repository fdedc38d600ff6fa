import { decodeHistory, encodeHistory } from '../../lib/schedules/job-history.codec';
import { emptyHistory, type JobHistory } from '../../lib/schedules/job-history';
import { judgeHealth, mergeHistory } from '../../lib/schedules/job-history.rules';
import type { JobRunOutcome, RunRecord } from '../../lib/schedules/run-record';

const run = (startedAt: number, outcome: JobRunOutcome, node = 'app-1'): RunRecord => ({
  id: `${node}:${startedAt}`, job: 'Jobs.close', trigger: 'schedule', instant: startedAt, node, instance: node, token: startedAt, startedAt,
  durationMs: outcome === 'running' ? undefined : 5, outcome, ...(outcome === 'failed' && { error: `boom at ${startedAt}` }),
});
const thresholds = { failureThreshold: 2, recoveryThreshold: 2 };
const KEEP = 20;

/** `runs` merged into `history`, then judged, as a write of the history does. */
function write(history: JobHistory | undefined, ...runs: RunRecord[]) {
  return judgeHealth({ ...mergeHistory(history, { runs }, KEEP, 1_000), job: 'Jobs.close' }, thresholds, KEEP, () => ({ id: `turn-${runs.at(-1)?.startedAt}`, at: 1_000 }));
}

describe('judgeHealth: failing and recovered, from the runs in start order', () => {
  it('turns failing at the threshold, once, naming the newest error and the streak\'s first failure; recovers the same way', () => {
    const first = write(undefined, run(100, 'failed'));
    expect(first.change).toBeUndefined();
    const second = write(first.history, run(200, 'failed', 'app-2'));
    expect(second.change).toEqual({ kind: 'failing', job: 'Jobs.close', failures: 2, since: 100, lastError: 'boom at 200' });
    expect(second.history.failingSince).toBe(100);
    expect(second.history.turn).toEqual({ id: 'turn-200', at: 1_000 });
    expect(write(second.history, run(300, 'failed')).change).toBeUndefined();
    const ok = write(second.history, run(400, 'completed'));
    expect(ok.change).toBeUndefined();
    const recovered = write(ok.history, run(500, 'completed', 'app-2'));
    expect(recovered.change).toEqual({ kind: 'recovered', job: 'Jobs.close', successes: 2, failingSince: 100 });
    expect(recovered.history.failingSince).toBeUndefined();
  });

  it('judges by start time: an older success told late breaks no streak it was not in, and a newer one told first is not undone', () => {
    // Failures at 100 and 300 told first, the success at 200 told after: the newest two ended runs are 300 and 200.
    const told = write(undefined, run(100, 'failed'), run(300, 'failed'));
    expect(told.change).toMatchObject({ kind: 'failing', failures: 2 });
    const late = write(undefined, run(100, 'failed'), run(200, 'completed'));
    expect(write(late.history, run(300, 'failed')).change).toBeUndefined();
  });

  it('leaves running and replaced runs out of a streak, and meets a threshold above what is kept at what is kept', () => {
    expect(write(undefined, run(100, 'failed'), run(150, 'replaced'), run(200, 'failed'), run(250, 'running')).change).toMatchObject({ kind: 'failing', failures: 2 });
    const big = judgeHealth({ ...emptyHistory('Jobs.close'), runs: [run(200, 'failed'), run(100, 'failed')] }, { failureThreshold: 50, recoveryThreshold: 1 }, 2, () => ({ id: 't', at: 1 }));
    expect(big.change).toMatchObject({ kind: 'failing', failures: 2 });
    // Kept runs that have not ended do not keep a threshold above what is kept from being met.
    const busy = judgeHealth({ ...emptyHistory('Jobs.close'), runs: [run(300, 'running'), run(200, 'failed'), run(100, 'failed')] }, { failureThreshold: 50, recoveryThreshold: 1 }, 3, () => ({ id: 't', at: 1 }));
    expect(busy.change).toMatchObject({ kind: 'failing', failures: 2 });
  });

  it('keeps failingSince through the codec, and a history without it reads as before', () => {
    const failing = write(write(undefined, run(100, 'failed')).history, run(200, 'failed')).history;
    expect(decodeHistory('k', encodeHistory(failing)).failingSince).toBe(100);
    const plain = write(undefined, run(100, 'completed')).history;
    expect(encodeHistory(plain)).not.toContain('failingSince');
    expect(decodeHistory('k', encodeHistory(plain))).not.toHaveProperty('failingSince');
  });
});
