import assert from 'node:assert/strict';
import type { TaskRecord } from '../store/tasks/task';
import type { TaskStore } from '../store/tasks/task-store';
import { encodeTask } from '../store/tasks/task.codec';
import { decideClaim } from '../tasks/task-claim.rules';
import { compareReady } from '../store/tasks/task-store.rules';
import { decideSubmit } from '../tasks/task-submit.rules';
import { rankOf } from '../store/tasks/task-rank.rules';
import { fixtureEachTest, testApi, type ContractOptions } from './test-api';

/**
 * What {@link describeRankedClaimsContract} is given for each test: two task stores on one backend (two nodes), and
 * a way to write a stored value as another writer (the previous version) would.
 */
export interface RankedClaimsFixture {
  /** Two stores on one store's data, as two nodes have; the suite connects and closes them. */
  readonly stores: readonly [TaskStore, TaskStore];
  /** Stores `json` under the task id `id` as it is, past the codec. */
  plant(id: string, json: string): Promise<void>;
  /** Called after each test, once the stores are closed (drop what the test wrote). */
  close(): Promise<void>;
}

const T0 = Date.now();
const ACTOR = { instance: 'a/1', acquirer: 'a' };
/** A pending task with the given place in claim order. */
export const pendingAt = (type: string, name: string, priority: number, seq: number): TaskRecord =>
  decideSubmit(undefined, { type, name, priority, seq, data: { name } }, T0, 60_000).task;

/** Claims each found task against the encoding of it as found (no read first), as a node does; all must land. */
export async function claimAll(store: TaskStore, found: readonly TaskRecord[], now: number): Promise<TaskRecord[]> {
  return Promise.all(found.map(async (task) => {
    const decision = decideClaim(task, ACTOR, now, 60_000);
    if (decision.outcome !== 'claimed') throw new assert.AssertionError({ message: `${task.id} not claimable: ${decision.outcome}` });
    assert.equal(await store.compareAndSet(task.id, { raw: encodeTask(task) }, decision.task), true, `the claim of ${task.id} as found`);
    return decision.task;
  }));
}

/**
 * Claim order over a backlog and records of the previous format: what every task store must do.
 * {@link describeStoreContracts} runs it on the `TaskRecordStore` of a backend; a backend's native task store runs it
 * directly.
 */
export function describeRankedClaimsContract(name: string, setup: () => Promise<RankedClaimsFixture>, options: ContractOptions = {}): void {
  const { describe, it, beforeEach, afterEach } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 30_000;

  describe(`TaskStore contract, claim order over a backlog: ${name}`, () => {
    const fixture = fixtureEachTest({ beforeEach, afterEach }, setup);

    it('claims a backlog batch after batch in claim order: a retry below the last batch and a late higher priority come first', async () => {
      const [a, b] = fixture().stores;
      const base = T0 * 1000;
      // Dense seqs, then a gap and sparse ones, and a higher priority at the far end of the seqs.
      const backlog = [
        ...Array.from({ length: 300 }, (_, i) => pendingAt('bk', `dense${i}`, 0, base + i * 50)),
        ...Array.from({ length: 300 }, (_, i) => pendingAt('bk', `sparse${i}`, 0, base + 1e9 + i * 5_000)),
        ...Array.from({ length: 100 }, (_, i) => pendingAt('bk', `urgent${i}`, 3, base + 2e9 + i)),
        pendingAt('bk-other', 'never', 99, base),
      ];
      for (let i = 0; i < backlog.length; i += 100) await Promise.all(backlog.slice(i, i + 100).map((t) => a.compareAndSet(t.id, { raw: null }, t)));
      const waiting = backlog.filter((t) => t.type === 'bk').sort(compareReady);
      const limit = 64;
      let now = T0 + 1;
      for (let round = 0; waiting.length > 0; round++) {
        const found = await b.claimable(['bk'], now, now - 1_000, limit);
        assert.deepEqual(found.map((t) => t.name), waiting.slice(0, limit).map((t) => t.name), `round ${round}`);
        const claimed = await claimAll(b, found, now);
        waiting.splice(0, found.length);
        if (round === 2) {
          // A retry keeps its seq: it is handed back below everything left.
          const retry = claimed[10];
          const read = await a.read(retry.id);
          const { claim: _claim, ...rest } = read.task!;
          const back: TaskRecord = { ...rest, state: 'pending', notBefore: now };
          assert.equal(await a.compareAndSet(retry.id, read, back), true);
          waiting.unshift(back);
        }
        if (round === 4) {
          const late = pendingAt('bk', 'late', 9, base + 3e9);
          await a.compareAndSet(late.id, { raw: null }, late);
          waiting.unshift(late);
        }
        now += 1;
      }
      assert.deepEqual(await b.claimable(['bk'], now, now - 1_000, limit), []);
    }, timeoutMs);

    it('finds and claims the records the previous format wrote: without a rank, and with one carried into a claim', async () => {
      const [a, b] = fixture().stores;
      const base = T0 * 1000;
      const current = pendingAt('old', 'current', 0, base + 2);
      await a.compareAndSet(current.id, { raw: null }, current);
      // Written by the previous version: no rank.
      const unranked = pendingAt('old', 'unranked', 0, base + 1);
      await fixture().plant(unranked.id, JSON.stringify({ v: 1, ...unranked }));
      const backingOff = { ...pendingAt('old', 'later', 5, base), notBefore: T0 + 60_000 };
      await fixture().plant(backingOff.id, JSON.stringify({ v: 1, ...backingOff }));
      // The previous version claimed a task this version wrote: it keeps the rank (a field it does not know) in the
      // place it stood, and its claim lapsed at T0 + 100.
      const claimedByOld = pendingAt('old', 'carried', 0, base);
      const stored = JSON.parse(encodeTask(claimedByOld)) as Record<string, unknown>;
      const claim = { instance: 'old/1', acquirer: 'old', epoch: 7, claimedAt: T0, expiresAt: T0 + 100 };
      await fixture().plant(claimedByOld.id, JSON.stringify({ ...stored, state: 'running', epoch: 7, claim, attempts: [{ attempt: 1, epoch: 7, instance: 'old/1', acquirer: 'old', startedAt: T0 }] }));

      // Before its claim lapsed, the carried rank does not make it claimable.
      assert.deepEqual((await b.claimable(['old'], T0 + 10, T0, 10)).map((t) => t.name), ['unranked', 'current']);
      const found = await b.claimable(['old'], T0 + 1_000, T0 + 1_000, 10);
      assert.deepEqual(found.map((t) => t.name), ['carried', 'unranked', 'current']);
      // Each compare-and-set is against the exact stored value, so a claim on a record of either format lands.
      await claimAll(b, found, T0 + 1_000);
      assert.deepEqual((await a.query({ states: ['running'] })).map((t) => t.name).sort(), ['carried', 'current', 'unranked']);
      // The previous version hands one back (pending, without a rank): it is found again.
      const read = await a.read(unranked.id);
      const { claim: _c, ...rest } = read.task!;
      await fixture().plant(unranked.id, JSON.stringify({ v: 1, ...rest, state: 'pending', notBefore: T0 }));
      assert.deepEqual((await b.claimable(['old'], T0 + 1_000, T0, 10)).map((t) => t.name), ['unranked']);
    }, timeoutMs);

    it('finds retries once due: one the previous format wrote with its place in claim order, one this format wrote', async () => {
      const [a, b] = fixture().stores;
      const base = T0 * 1000;
      const oldRetry = { ...pendingAt('wait', 'old-retry', 0, base + 1), notBefore: T0 + 500 };
      await fixture().plant(oldRetry.id, JSON.stringify({ v: 1, ...oldRetry, rank: rankOf(oldRetry) }));
      const newRetry = { ...pendingAt('wait', 'new-retry', 0, base + 2), notBefore: T0 + 500 };
      await a.compareAndSet(newRetry.id, { raw: null }, newRetry);
      const later = { ...pendingAt('wait', 'later', 9, base), notBefore: T0 + 5_000 };
      await a.compareAndSet(later.id, { raw: null }, later);
      const ready = pendingAt('wait', 'ready', 0, base + 3);
      await a.compareAndSet(ready.id, { raw: null }, ready);
      assert.deepEqual((await b.claimable(['wait'], T0 + 10, T0, 10)).map((t) => t.name), ['ready']);
      const found = await b.claimable(['wait'], T0 + 1_000, T0, 10);
      assert.deepEqual(found.map((t) => t.name), ['old-retry', 'new-retry', 'ready']);
      await claimAll(b, found, T0 + 1_000);
      assert.deepEqual((await b.claimable(['wait'], T0 + 5_000, T0, 10)).map((t) => t.name), ['later']);
    }, timeoutMs);

    it('finds tasks of types with characters that patterns give meaning to, and no others', async () => {
      const [a, b] = fixture().stores;
      const base = T0 * 1000;
      const odd = 're(port)s.v2+[x]{1}|*?^$\\';
      const lookalike = 're(port)sXv2+[x]{1}|*?^$\\';
      for (const type of [odd, lookalike]) {
        const ranked = pendingAt(type, 'ranked', 0, base + 2);
        await a.compareAndSet(ranked.id, { raw: null }, ranked);
        const unranked = pendingAt(type, 'unranked', 0, base + 1);
        await fixture().plant(unranked.id, JSON.stringify({ v: 1, ...unranked }));
        const held = pendingAt(type, 'lapsed', 0, base);
        const claim = decideClaim(held, ACTOR, T0, 100);
        if (claim.outcome !== 'claimed') throw new assert.AssertionError({ message: `${held.id} not claimed: ${claim.outcome}` });
        await a.compareAndSet(held.id, { raw: null }, claim.task);
      }
      const found = await b.claimable([odd], T0 + 1_000, T0 + 1_000, 10);
      assert.deepEqual(found.map((t) => `${t.type} ${t.name}`), ['lapsed', 'unranked', 'ranked'].map((name) => `${odd} ${name}`));
    }, timeoutMs);
  });
}
