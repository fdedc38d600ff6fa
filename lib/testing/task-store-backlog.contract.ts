import assert from 'node:assert/strict';
import type { TaskRecord } from '../store/tasks/task';
import type { TaskStore } from '../store/tasks/task-store';
import { encodeTask } from '../store/tasks/task.codec';
import { compareReady } from '../store/tasks/task-store.rules';
import { claimAll, pendingAt } from './task-store-ranks.contract';
import { testApi, type ContractOptions } from './test-api';

/**
 * What {@link describeTaskBacklogContract} is given: one task store over a fresh place (the suite connects and closes
 * it), optionally a quicker way to seed it, and what its claim query reads, if the store promises a bound.
 */
export interface TaskBacklogFixture {
  /** The store the claim queries are asked of; the suite connects it, and closes it before {@link TaskBacklogFixture.close}. */
  readonly store: TaskStore;
  /**
   * Writes `tasks` (all new) as the store would, called once the store is connected. Default: the store's own
   * creates, 1,000 at a time.
   */
  seed?(tasks: readonly TaskRecord[]): Promise<void>;
  /** What the store's claim query reads and the bound it promises; without it, the suite checks claim order only. */
  readonly reads?: ClaimQueryReads;
  /** Called after the test, once the store is closed (drop what the test wrote). */
  close(): Promise<void>;
}

/** What a task store's claim query ({@link TaskStore.claimable}) read, and how much it may read. */
export interface ClaimQueryReads {
  /** Records (rows, index entries, values) the store read to answer the last `claimable` call. */
  last(): number | Promise<number>;
  /** The most records a `claimable` call of the given batch over the given backlog may read. */
  bound(query: BacklogQuery): number;
}

/** The facts of one claim query over the suite's backlog that a store's read bound may depend on. */
export interface BacklogQuery {
  /** The `limit` asked for. */
  readonly batch: number;
  /** Pending tasks of the asked type backing off (a retry's `notBefore` still ahead). */
  readonly backingOff: number;
  /** Pending tasks of the asked type that backed off and are due now, none claimed since. */
  readonly due: number;
  /** Those of {@link BacklogQuery.due} that came due since the previous claim query. */
  readonly newlyDue: number;
}

/**
 * A claim query over a backlog costs about its batch, however many tasks wait, and keeps claim order: 10,000 tasks
 * due, 500 backing off ahead of them and 5,000 of another type; a batch of 256 claimed twelve times (a retry and a
 * late higher priority handed in on the way), then the tasks backing off come due, then the claims lapse. After each
 * query the store's {@link ClaimQueryReads.last} must stay within its {@link ClaimQueryReads.bound}: a query that
 * reads the whole backlog fails. A store that promises no bound (the default `TaskRecordStore`, which reads every
 * task) leaves `reads` out and is checked for claim order alone. {@link describeStoreContracts} leaves this suite
 * out; a backend's native task store runs it directly. A test may take `options.timeoutMs`, default 120 s here:
 *
 * ```ts
 * describeTaskBacklogContract('my store', async () => ({
 *   store: new MyTaskStore(),
 *   reads: { last: () => lastExamined, bound: ({ batch, backingOff }) => batch + backingOff },
 *   close: async () => {},
 * }));
 * ```
 */
export function describeTaskBacklogContract(name: string, setup: () => Promise<TaskBacklogFixture>, options: ContractOptions = {}): void {
  const { describe, it } = testApi(options.test);
  const timeoutMs = options.timeoutMs ?? 120_000;

  describe(`TaskStore contract, a backlog: ${name}`, () => {
    it('costs a claim query about its batch however many tasks wait, and keeps claim order', async () => {
      const fixture = await setup();
      const { store } = fixture;
      await store.connect();
      try {
        await runBacklog(store, fixture);
      } finally {
        await store.close();
        await fixture.close();
      }
    }, timeoutMs);
  });
}

async function runBacklog(store: TaskStore, fixture: TaskBacklogFixture): Promise<void> {
  // 10,000 due, ordered as a submitter's runs are, some of a higher priority; 500 of the first priority backing off
  // ahead of them (the lowest seqs); and 5,000 of another type, of a higher priority.
  const now = Date.now();
  const base = now * 1000 - 7.2e9;
  const backlog = [
    ...Array.from({ length: 6_000 }, (_, i) => pendingAt('bk', `a${i}`, 0, base + i * 50)),
    ...Array.from({ length: 3_900 }, (_, i) => pendingAt('bk', `b${i}`, 0, base + 3.6e9 + i * 700)),
    ...Array.from({ length: 100 }, (_, i) => pendingAt('bk', `c${i}`, 2, base + 3.6e9 + i * 10_000)),
  ];
  const later = now + 3_600_000;
  const backingOff = Array.from({ length: 500 }, (_, i) => ({ ...pendingAt('bk', `w${i}`, 0, base - 1_000 - i), notBefore: later }));
  const other = Array.from({ length: 5_000 }, (_, i) => pendingAt('other', `o${i}`, 9, base + i));
  await (fixture.seed ?? seedByCreates(store))([...backlog, ...backingOff, ...other]);

  const limit = 256;
  /** Asks for a batch; checks it is `expected` in claim order and what the query read against the store's bound. */
  const claimable = async (at: number, expected: readonly TaskRecord[], query: Omit<BacklogQuery, 'batch'>, what: string): Promise<TaskRecord[]> => {
    const found = await store.claimable(['bk'], at, now - 1_000, limit);
    assert.deepEqual(found.map((t) => t.id), expected.slice(0, limit).map((t) => t.id), `${what}: the batch in claim order`);
    if (fixture.reads) {
      const read = await fixture.reads.last();
      const bound = fixture.reads.bound({ batch: limit, ...query });
      assert.ok(read <= bound, `${what}: the claim query read ${read} records, more than the ${bound} it may`);
    }
    return found;
  };

  const waiting = [...backlog].sort(compareReady);
  for (let round = 0; round < 12; round++) {
    const found = await claimable(now, waiting, { backingOff: backingOff.length, due: 0, newlyDue: 0 }, `round ${round}`);
    const claimed = await claimAll(store, found, now);
    waiting.splice(0, found.length);
    if (round === 3) {
      // A retry keeps its seq, below every task left; a late submit of a higher priority comes first too.
      const { claim: _claim, ...rest } = claimed[5];
      const retry: TaskRecord = { ...rest, state: 'pending', notBefore: now };
      assert.equal(await store.compareAndSet(retry.id, { raw: encodeTask(claimed[5]) }, retry), true, 'the retry');
      const late = pendingAt('bk', 'late', 7, now * 1000);
      assert.equal(await store.compareAndSet(late.id, { raw: null }, late), true, 'the late submit');
      waiting.unshift(late, retry);
    }
  }

  // Once the tasks backing off come due they come first (their seqs are the lowest), twice alike.
  const due = [...backingOff].sort(compareReady);
  await claimable(later, due, { backingOff: 0, due: due.length, newlyDue: due.length }, 'the tasks that backed off, come due');
  await claimable(later, due, { backingOff: 0, due: due.length, newlyDue: 0 }, 'the same, asked again');
  // The claims of the first rounds lapse: found by their expiry, in claim order with the rest.
  const lapsed = await store.claimable(['bk'], later, now + 120_000, 10);
  assert.deepEqual(lapsed.map((t) => t.state), Array(10).fill('running'), 'the lapsed claims come first');
  assert.deepEqual(lapsed.map((t) => t.id), [...lapsed].sort(compareReady).map((t) => t.id), 'the lapsed claims in claim order');
}

/** The default seed: the store's own creates, 1,000 at a time. */
function seedByCreates(store: TaskStore): (tasks: readonly TaskRecord[]) => Promise<void> {
  return async (tasks) => {
    for (let i = 0; i < tasks.length; i += 1_000) {
      const landed = await Promise.all(tasks.slice(i, i + 1_000).map((t) => store.compareAndSet(t.id, { raw: null }, t)));
      assert.ok(landed.every(Boolean), 'every create of the seed lands');
    }
  };
}
