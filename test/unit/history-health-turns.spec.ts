import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import type { HistoryStore, StoredHistory } from '../../lib/schedules/history-store';
import { HistoryWriter } from '../../lib/schedules/history-writer';
import type { JobHistory } from '../../lib/schedules/job-history';
import { decodeHistory, encodeHistory } from '../../lib/schedules/job-history.codec';
import type { JobRunOutcome, RunRecord } from '../../lib/schedules/run-record';

/**
 * A history store in memory whose next write can land and then answer with a timeout (the answer lost), and which can
 * lose everything (then it says since when), for the writer's health turns under those two faults.
 */
function faultyStore() {
  const records = new Map<string, string>();
  const state = { answerLost: false, lostAt: undefined as number | undefined };
  const store: Pick<HistoryStore, 'read' | 'write' | 'lostSince'> = {
    async read(job) {
      const raw = records.get(job);
      return raw === undefined ? undefined : { raw, history: decodeHistory(job, raw) };
    },
    async write(job, expected, next): Promise<StoredHistory | undefined> {
      if ((expected?.raw ?? undefined) !== records.get(job)) return undefined;
      const raw = encodeHistory(next);
      records.set(job, raw);
      if (state.answerLost) {
        state.answerLost = false;
        throw new StoreTimeoutError('write the history: deadline of 100 ms passed');
      }
      return { raw, history: next };
    },
    async lostSince() {
      return state.lostAt;
    },
  };
  const stored = (): JobHistory => decodeHistory('j', records.get('j')!);
  return { store: store as HistoryStore, records, state, stored };
}

let now = 1_000;
const clock = { now: () => now++ };
const writer = (store: HistoryStore) => new HistoryWriter(store, { keep: 20, callTimeoutMs: 100, clock });
const run = (node: string, startedAt: number, outcome: JobRunOutcome): RunRecord => ({
  id: `${node}:${startedAt}`, job: 'j', trigger: 'schedule', node, instance: node, token: startedAt, startedAt, durationMs: 1, outcome,
  ...(outcome === 'failed' && { error: 'boom' }),
});
const ONE = { health: { failureThreshold: 1, recoveryThreshold: 1 }, settleMs: 0, node: 'n' };

describe('HistoryWriter: a job\'s health turns, each said once, under a lost answer and a store loss', () => {
  it('says the turn of a write whose answer was lost once a later read shows it landed; no other node says it', async () => {
    const { store, state, stored } = faultyStore();
    const [a, b] = [writer(store), writer(store)];
    state.answerLost = true;
    await expect(a.write('j', { runs: [run('A', 10, 'failed')] }, false, ONE)).rejects.toThrow(StoreTimeoutError);
    expect(stored().failingSince).toBe(10); // it landed
    expect((await b.write('j', { runs: [run('B', 20, 'failed')] }, false, ONE)).change).toBeUndefined();
    const retried = await a.write('j', { runs: [run('A', 10, 'failed')] }, false, ONE);
    expect(retried.change).toMatchObject({ kind: 'failing', failures: 1, since: 10 });
    expect((await a.write('j', { runs: [run('A', 30, 'failed')] }, false, ONE)).change).toBeUndefined();
  });

  it('forgets a lost answer\'s turn that did not land', async () => {
    const { store, state, records } = faultyStore();
    const a = writer(store);
    state.answerLost = true;
    await expect(a.write('j', { runs: [run('A', 10, 'failed')] }, false, ONE)).rejects.toThrow(StoreTimeoutError);
    records.clear(); // as if it never landed
    const next = await a.write('j', { runs: [run('A', 20, 'completed')] }, false, ONE);
    expect(next.change).toBeUndefined();
  });

  it('after a store loss, a turn said since is not said again by a node writing back what it held', async () => {
    const { store, state, records, stored } = faultyStore();
    const [a, c] = [writer(store), writer(store)];
    expect((await a.write('j', { runs: [run('A', 5, 'completed')] }, false, ONE)).change).toBeUndefined();
    records.clear();
    state.lostAt = 1;
    expect((await c.write('j', { runs: [run('C', 30, 'failed')] }, false, ONE)).change).toMatchObject({ kind: 'failing' });
    now += 40_000; // past the writer's check of what it holds
    const said: unknown[] = [];
    await a.checkHeld(async (job) => said.push((await a.write(job, { runs: [] }, true, ONE)).change));
    expect(said).toEqual([undefined]);
    expect(stored().failingSince).toBe(30);
  });

  it('after a store loss, a stale copy written back does not bring back a turn another node said since', async () => {
    const { store, state, records, stored } = faultyStore();
    const [a, b] = [writer(store), writer(store)];
    expect((await a.write('j', { runs: [run('A', 10, 'failed')] }, false, ONE)).change).toMatchObject({ kind: 'failing' });
    expect((await b.write('j', { runs: [run('B', 20, 'completed')] }, false, ONE)).change).toMatchObject({ kind: 'recovered' });
    records.clear();
    state.lostAt = 1;
    now += 40_000;
    await a.checkHeld((job) => a.write(job, { runs: [] }, true, ONE)); // A writes back its older copy: failing
    expect(stored().failingSince).toBe(10);
    // B's next write finds the record behind what it wrote: it brings back its own, recovered, and says nothing again.
    const next = await b.write('j', { runs: [run('B', 40, 'completed')] }, false, ONE);
    expect(next.change).toBeUndefined();
    expect(stored().failingSince).toBeUndefined();
    expect(stored().runs.map((r) => r.id)).toEqual(['B:40', 'B:20', 'A:10']);
  });
});
