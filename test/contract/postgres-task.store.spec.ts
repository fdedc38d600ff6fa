import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../../lib/backends/postgres/tasks/postgres-task.store';
import type { TaskRecord } from '../../lib/store/tasks/task';
import { encodeTask } from '../../lib/store/tasks/task.codec';
import { decideClaim } from '../../lib/tasks/task-claim.rules';
import { describeRankedClaimsContract, describeTaskBacklogContract, describeTaskStoreContract } from '../../lib/testing';
import { pendingAt } from '../../lib/testing/task-store-ranks.contract';
import { testPostgresUrl } from '../support/test-postgres';

/*
 * The native task store on PostgreSQL (tasks in a table of their own, claims found on its indexes) against the test
 * run's server: the task store contracts (what a claim query reads over a backlog, from its plan), two nodes with a
 * pool each.
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

  describe('a claim query on a table its statistics do not know yet', () => {
    it('reads its batch, not the backlog, before the table was ever analyzed (a queue filled in its first minute)', async () => {
      // A schema of its own, its table never analyzed: autovacuum, which would analyze it within a minute, off for it.
      const own = `tasks_${randomUUID().slice(0, 8)}`;
      const store = new PostgresTaskStore(new PostgresBackend({ connectionString: testPostgresUrl(), schema: own, mapPrefix: 'fresh', callTimeoutMs: 5_000, onLostData: () => undefined }));
      const reads = planReads(store, pool);
      await store.connect();
      try {
        await pool.query(`ALTER TABLE ${own}.tasks SET (autovacuum_enabled = false)`);
        await plantTasks(pool, own, 'fresh.tasks', Array.from({ length: 20_000 }, (_, i) => pendingAt('fresh', `t${i}`, 0, i + 1)));
        expect(Number((await pool.query(`SELECT reltuples FROM pg_class WHERE oid = '${own}.tasks'::regclass`)).rows[0].reltuples)).toBe(-1); // never analyzed
        const found = await store.claimable(['fresh'], Date.now(), Date.now(), 4);
        expect(found.map((t) => t.name)).toEqual(['t0', 't1', 't2', 't3']);
        // The claim-order index's first rows: not every pending task of the type, read and sorted (20,000 here).
        expect(await reads()).toBeLessThanOrEqual(4 + 10);
      } finally {
        await store.close();
        await pool.query(`DROP SCHEMA IF EXISTS ${own} CASCADE`);
      }
    });
  });

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

  describeTaskBacklogContract('postgres native', async () => {
    const mapPrefix = `b${randomUUID().slice(0, 8)}`;
    const store = node(mapPrefix);
    const reads = planReads(store, pool);
    return {
      store,
      async seed(tasks) {
        await plantTasks(pool, schema, `${mapPrefix}.tasks`, tasks);
        await pool.query(`ANALYZE ${schema}.tasks`);
      },
      // The batch, and the tasks backing off that the index steps over; never the backlog.
      reads: { last: reads, bound: ({ batch, backingOff }) => batch + backingOff + 10 },
      close: async () => undefined,
    };
  });
});

/** Writes `tasks` (all new) into the tasks table of `schema` under `map`, 1,000 rows a statement, past the store. */
async function plantTasks(pool: Pool, schema: string, map: string, tasks: readonly TaskRecord[]): Promise<void> {
  for (let i = 0; i < tasks.length; i += 1_000) {
    const slice = tasks.slice(i, i + 1_000);
    await pool.query(`INSERT INTO ${schema}.tasks (map, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS x(k, v)`, [map, slice.map((t) => t.id), slice.map((t) => encodeTask(t))]);
  }
}

/**
 * Rows the last claim query of `store` read from the table, from its plan: the statements of a `claimable` call are
 * run again under `EXPLAIN ANALYZE` on `pool`, with the same values.
 */
function planReads(store: PostgresTaskStore, pool: Pool): () => number {
  type Select = (sql: string, values: unknown[], ...rest: unknown[]) => Promise<unknown[]>;
  let reads: number[] | undefined;
  let last: number[] = [];
  const hooked = new WeakSet<object>();
  const claimable = store.claimable.bind(store);
  store.claimable = async (...args) => {
    // The store's table, a new one on each connect.
    const table = (store as unknown as { table: { select: Select } }).table;
    if (!hooked.has(table)) {
      hooked.add(table);
      const select = table.select.bind(table);
      table.select = async (sql, values, ...rest) => {
        // Only a claim query's statements, and never a write (EXPLAIN ANALYZE runs what it explains).
        if (reads && sql.startsWith('SELECT')) {
          const plan = (await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values)).rows[0]['QUERY PLAN'][0].Plan;
          reads.push(rowsRead(plan));
        }
        return select(sql, values, ...rest);
      };
    }
    const mine: number[] = [];
    reads = mine;
    try {
      return await claimable(...args);
    } finally {
      reads = undefined;
      last = mine;
    }
  };
  return () => last.reduce((sum, n) => sum + n, 0);
}

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
