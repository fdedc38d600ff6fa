import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../../lib/backends/postgres/tasks/postgres-task.store';
import type { TaskRecord } from '../../lib/tasks/task';
import { encodeTask } from '../../lib/tasks/task.codec';
import { compareReady, decideClaim } from '../../lib/tasks/task-claim.rules';
import { describeRankedClaimsContract, describeTaskStoreContract } from '../../lib/testing';
import { pendingAt } from '../../lib/testing/task-store-ranks.contract';
import { testPostgresUrl } from '../support/test-postgres';

/*
 * The native task store on PostgreSQL (tasks in a table of their own, claims found on its indexes) against the test
 * run's server: the task store contracts, two nodes with a pool each, and what a claim query reads over a backlog.
 */
describe('PostgresTaskStore against the test run\'s PostgreSQL server', () => {
  const schema = `tasks_${randomUUID().slice(0, 8)}`;
  const pool = new Pool({ connectionString: testPostgresUrl(), max: 2 });
  const backend = (mapPrefix: string) => new PostgresBackend({ connectionString: testPostgresUrl(), schema, mapPrefix, callTimeoutMs: 5_000, onLostData: () => undefined });
  const node = (mapPrefix: string) => new PostgresTaskStore(backend(mapPrefix));
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  describeTaskStoreContract('postgres native', async () => {
    const mapPrefix = `p${randomUUID().slice(0, 8)}`;
    return { stores: [node(mapPrefix), node(mapPrefix)], close: async () => undefined };
  }, { timeoutMs: 120_000 });

  describeRankedClaimsContract('postgres native', async () => {
    const mapPrefix = `r${randomUUID().slice(0, 8)}`;
    return {
      stores: [node(mapPrefix), node(mapPrefix)],
      async plant(id, json) {
        await pool.query(`INSERT INTO ${schema}.tasks (map, key, value) VALUES ($1, $2, $3) ON CONFLICT (map, key) DO UPDATE SET value = EXCLUDED.value`, [`${mapPrefix}.tasks`, id, json]);
      },
      close: async () => undefined,
    };
  }, { timeoutMs: 120_000 });

  describe('compare-and-sets asked for together', () => {
    it('go out in one statement, each landing or not on its own; a second write of one key waits for the next', async () => {
      const store = node(`w${randomUUID().slice(0, 8)}`);
      await store.connect();
      try {
        const tasks = ['a', 'b', 'c', 'd'].map((name) => pendingAt('batch', name, 0, Date.now() * 1000));
        let before = store.operationCount();
        const created = await Promise.all([...tasks.map((t) => store.compareAndSet(t.id, { raw: null }, t)), store.compareAndSet(tasks[0].id, { raw: null }, tasks[0])]);
        expect(created).toEqual([true, true, true, true, false]);
        expect(store.operationCount() - before).toBe(2); // the four, then the second create of a
        // Claims of three as read, one against a value that changed since, and two claims of one read of d.
        const now = Date.now();
        const claim = (task: TaskRecord, instance: string) => {
          const decision = decideClaim(task, { instance, acquirer: instance }, now, 60_000);
          if (decision.outcome !== 'claimed') throw new Error(`${task.id} not claimable`);
          return decision.task;
        };
        const stale = { ...tasks[2], priority: 5 };
        before = store.operationCount();
        const landed = await Promise.all([
          store.compareAndSet(tasks[0].id, { raw: encodeTask(tasks[0]) }, claim(tasks[0], 'n/1')),
          store.compareAndSet(tasks[1].id, { raw: encodeTask(tasks[1]) }, claim(tasks[1], 'n/1')),
          store.compareAndSet(tasks[2].id, { raw: encodeTask(stale) }, claim(stale, 'n/1')),
          store.compareAndSet(tasks[3].id, { raw: encodeTask(tasks[3]) }, claim(tasks[3], 'n/1')),
          store.compareAndSet(tasks[3].id, { raw: encodeTask(tasks[3]) }, claim(tasks[3], 'n/2')),
        ]);
        // The two claims of d go out in two calls, which may run at once on two connections: one of them lands.
        expect(landed.slice(0, 3)).toEqual([true, true, false]);
        expect(landed.slice(3).filter(Boolean)).toHaveLength(1);
        expect(store.operationCount() - before).toBe(2);
        const states = await Promise.all(tasks.map(async (t) => (await store.read(t.id)).task));
        const winner = landed[3] ? 'n/1' : 'n/2';
        expect(states.map((t) => `${t!.state} ${t!.claim?.instance ?? '-'}`)).toEqual(['running n/1', 'running n/1', 'pending -', `running ${winner}`]);
      } finally {
        await store.close();
      }
    });
  });

  describe('a task another transaction holds locked', () => {
    it('is skipped, not waited for: its compare-and-set fails at once, and lands once the lock is gone', async () => {
      const mapPrefix = `l${randomUUID().slice(0, 8)}`;
      const store = node(mapPrefix);
      await store.connect();
      const other = await pool.connect();
      try {
        const task = pendingAt('locked', 'x', 0, Date.now() * 1000);
        expect(await store.compareAndSet(task.id, { raw: null }, task)).toBe(true);
        const claim = decideClaim(task, { instance: 'n/1', acquirer: 'n' }, Date.now(), 60_000);
        if (claim.outcome !== 'claimed') throw new Error('not claimable');
        // Another node's claim of the same task, in flight (its row locked until it commits).
        await other.query('BEGIN');
        await other.query(`SELECT 1 FROM ${schema}.tasks WHERE map = $1 AND key = $2 FOR UPDATE`, [`${mapPrefix}.tasks`, task.id]);
        expect(await store.compareAndSet(task.id, { raw: encodeTask(task) }, claim.task)).toBe(false);
        await other.query('ROLLBACK');
        expect(await store.compareAndSet(task.id, { raw: encodeTask(task) }, claim.task)).toBe(true);
      } finally {
        await other.query('ROLLBACK').catch(() => undefined);
        other.release();
        await store.close();
      }
    });
  });

  describe('a backlog', () => {
    it('costs a claim query about its batch however many tasks wait, and keeps claim order', async () => {
      const mapPrefix = `b${randomUUID().slice(0, 8)}`;
      const store = node(mapPrefix);
      await store.connect();
      try {
        // 10,000 due, ordered as a submitter's runs are, some of a higher priority; 500 of the first priority
        // backing off ahead of them; and 5,000 of another type.
        const now = Date.now();
        const base = now * 1000 - 7.2e9;
        const backlog = [
          ...Array.from({ length: 6_000 }, (_, i) => pendingAt('bk', `a${i}`, 0, base + i * 50)),
          ...Array.from({ length: 3_900 }, (_, i) => pendingAt('bk', `b${i}`, 0, base + 3.6e9 + i * 700)),
          ...Array.from({ length: 100 }, (_, i) => pendingAt('bk', `c${i}`, 2, base + 3.6e9 + i * 10_000)),
        ];
        const waitingOut = Array.from({ length: 500 }, (_, i) => ({ ...pendingAt('bk', `w${i}`, 0, base - 1_000 - i), notBefore: now + 3_600_000 }));
        const other = Array.from({ length: 5_000 }, (_, i) => pendingAt('other', `o${i}`, 9, base + i));
        const rows = [...backlog, ...waitingOut, ...other];
        for (let i = 0; i < rows.length; i += 1_000) {
          const slice = rows.slice(i, i + 1_000);
          await pool.query(`INSERT INTO ${schema}.tasks (map, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS x(k, v)`, [`${mapPrefix}.tasks`, slice.map((t) => t.id), slice.map((t) => encodeTask(t))]);
        }
        await pool.query(`ANALYZE ${schema}.tasks`);
        const waiting = [...backlog].sort(compareReady);
        // Rows each claim query read from the table, from its plan run on the same statement and values.
        const reads: number[] = [];
        const table = (store as unknown as { table: { select: (sql: string, values: unknown[], ...rest: unknown[]) => Promise<unknown[]> } }).table;
        const select = table.select.bind(table);
        table.select = async (sql, values, ...rest) => {
          if (sql.startsWith('SELECT')) {
            const plan = (await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values)).rows[0]['QUERY PLAN'][0].Plan;
            reads.push(rowsRead(plan));
          }
          return select(sql, values, ...rest);
        };
        const limit = 256;
        const actor = { instance: 'n/1', acquirer: 'n' };
        for (let round = 0; round < 12; round++) {
          reads.length = 0;
          const found = await store.claimable(['bk'], now, now - 1_000, limit);
          expect(found.map((t) => t.id)).toEqual(waiting.slice(0, limit).map((t) => t.id));
          // The batch, and the tasks backing off that the index steps over; never the backlog.
          expect(reads).toHaveLength(1);
          expect(reads[0]).toBeLessThanOrEqual(limit + waitingOut.length + 10);
          const claimed = await Promise.all(found.map(async (task) => {
            const decision = decideClaim(task, actor, now, 60_000);
            expect(decision.outcome === 'claimed' && (await store.compareAndSet(task.id, { raw: encodeTask(task) }, decision.task))).toBe(true);
            return decision.outcome === 'claimed' ? decision.task : task;
          }));
          waiting.splice(0, found.length);
          if (round === 3) {
            // A retry keeps its seq, below every task left; a late submit of a higher priority comes first too.
            const { claim: _claim, ...rest } = claimed[5];
            const retry: TaskRecord = { ...rest, state: 'pending', notBefore: now };
            expect(await store.compareAndSet(retry.id, { raw: encodeTask(claimed[5]) }, retry)).toBe(true);
            const late = pendingAt('bk', 'late', 7, now * 1000);
            expect(await store.compareAndSet(late.id, { raw: null }, late)).toBe(true);
            waiting.unshift(late, retry);
          }
        }
      } finally {
        await store.close();
      }
    }, 120_000);
  });
});

/** A node of a JSON plan. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows the plan's scans of the tasks table returned or stepped over. */
function rowsRead(node: PlanNode): number {
  const here = node['Relation Name'] === 'tasks'
    ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * node['Actual Loops']
    : 0;
  return here + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child), 0);
}
