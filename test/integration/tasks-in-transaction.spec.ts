import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { GatekeeperModule, InvalidInputError, TaskHandler, TaskService, type TaskContext } from '../../lib';
import knex, { type Knex } from 'knex';
import { knexExecutor, pgExecutor, typeormExecutor } from '../../lib/fencing';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

const shipped: string[] = [];
/** The table the transactional handler writes to, and how many times it has run each order. */
const CHARGES = `charges_${randomUUID().slice(0, 8)}`;
const chargeRuns = new Map<string, number>();
let chargePool: Pool | undefined;
let knexDb: Knex | undefined;
let typeormSource: DataSource | undefined;

@Injectable()
class Shipping {
  @TaskHandler('ship')
  ship(data: { order: string }): void {
    shipped.push(data.order);
  }

  /** The same through Knex, which binds values by position: a submit and a completion in its transactions. */
  @TaskHandler('charge-knex')
  async chargeThroughKnex(data: { order: string }, context: TaskContext): Promise<void> {
    await knexDb!.transaction(async (trx) => {
      await trx.raw(`INSERT INTO ${CHARGES} (id, run) VALUES (?, 1)`, [data.order]);
      await context.completeIn(knexExecutor(trx), { charged: data.order });
    });
  }

  /** The same through TypeORM's transaction, as the Tasks page shows it. */
  @TaskHandler('charge-typeorm')
  async chargeThroughTypeorm(data: { order: string }, context: TaskContext): Promise<void> {
    await typeormSource!.transaction(async (manager) => {
      await manager.query(`INSERT INTO ${CHARGES} (id, run) VALUES ($1, 1)`, [data.order]);
      await context.completeIn(typeormExecutor(manager), { charged: data.order });
    });
  }

  /** Writes a charge and completes the task in one transaction; its first run rolls back when the order says so. */
  @TaskHandler('charge', { backoff: { base: 10, factor: 1, max: 10 } })
  async charge(data: { order: string; rollBackFirst?: boolean }, context: TaskContext): Promise<void> {
    const run = (chargeRuns.get(data.order) ?? 0) + 1;
    chargeRuns.set(data.order, run);
    const client = await chargePool!.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${CHARGES} (id, run) VALUES ($1, $2)`, [data.order, run]);
      await context.completeIn(pgExecutor(client), { charged: data.order });
      await client.query(data.rollBackFirst && run === 1 ? 'ROLLBACK' : 'COMMIT');
    } finally {
      client.release();
    }
  }
}

/*
 * Tasks submitted inside the application's own transaction, on the test run's PostgreSQL: the app's orders table and
 * the library's tables in one database, written through pg and through TypeORM. A rolled-back transaction leaves no
 * task; a committed one is claimed and run; before the commit no other connection sees it.
 */
describe('a task submitted in the application\'s transaction (PostgreSQL)', () => {
  const pool = new Pool({ connectionString: testPostgresUrl(), max: 4 });
  const orders = `orders_${randomUUID().slice(0, 8)}`;
  let app: INestApplicationContext;
  let tasks: TaskService;

  beforeAll(async () => {
    await pool.query(`CREATE TABLE ${orders} (id text PRIMARY KEY)`);
    await pool.query(`CREATE TABLE ${CHARGES} (id text PRIMARY KEY, run int NOT NULL)`);
    chargePool = pool;
    knexDb = knex({ client: 'pg', connection: testPostgresUrl(), pool: { min: 0, max: 2 } });
    typeormSource = await new DataSource({ type: 'postgres', url: testPostgresUrl(), entities: [], poolSize: 2 }).initialize();
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'postgres', postgres: { mapPrefix: uniquePrefix('tx-tasks') }, identity: { acquirer: 'tx-node' }, tasks: { scanInterval: '500ms' } })],
      providers: [Shipping],
    }).setLogger(new CapturingLogger()).compile();
    await (app as unknown as { init(): Promise<unknown> }).init();
    tasks = app.get(TaskService);
  });
  afterAll(async () => {
    await app.close();
    await pool.query(`DROP TABLE ${orders}`);
    await pool.query(`DROP TABLE ${CHARGES}`);
    await knexDb?.destroy();
    await typeormSource?.destroy();
    await pool.end();
  });

  /** An order and its shipping task in one pg transaction, committed or rolled back. */
  async function order(id: string, outcome: 'commit' | 'rollback', beforeEnd?: () => Promise<void>): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${orders} (id) VALUES ($1)`, [id]);
      const task = await tasks.submit({ type: 'ship', name: id, data: { order: id } }, { transaction: pgExecutor(client) });
      expect(task).toMatchObject({ id: `ship:${id}`, state: 'pending' });
      await beforeEnd?.();
      await client.query(outcome === 'commit' ? 'COMMIT' : 'ROLLBACK');
    } finally {
      client.release();
    }
  }

  it('a rolled-back transaction leaves neither the order nor its task', async () => {
    await order('o-1', 'rollback');
    expect(await tasks.get('ship:o-1')).toBeUndefined();
    expect((await pool.query(`SELECT id FROM ${orders} WHERE id = 'o-1'`)).rows).toEqual([]);
  });

  it('a committed one is claimed and run; until the commit, no other connection sees the task', async () => {
    await order('o-2', 'commit', async () => {
      expect(await tasks.get('ship:o-2')).toBeUndefined();
    });
    await eventually('the task to run', () => shipped.includes('o-2'), { timeoutMs: 10_000 });
    await eventually('its outcome to be written', async () => (await tasks.get('ship:o-2'))?.state === 'done', { timeoutMs: 10_000 });
  });

  it('submitMany in the transaction: all of them roll back with it, or commit with it and run', async () => {
    for (const outcome of ['ROLLBACK', 'COMMIT'] as const) {
      const ids = ['m-1', 'm-2', 'm-3'].map((id) => `${id}-${outcome}`);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const submitted = await tasks.submitMany(ids.map((id) => ({ type: 'ship', name: id, data: { order: id } })), { transaction: pgExecutor(client) });
        expect(submitted.map((t) => t.id)).toEqual(ids.map((id) => `ship:${id}`));
        // Until the transaction ends, no other connection sees them.
        for (const id of ids) expect(await tasks.get(`ship:${id}`)).toBeUndefined();
        await client.query(outcome);
      } finally {
        client.release();
      }
      if (outcome === 'ROLLBACK') for (const id of ids) expect(await tasks.get(`ship:${id}`)).toBeUndefined();
      else await eventually('the three to run', () => ids.every((id) => shipped.includes(id)), { timeoutMs: 10_000 });
    }
  });

  it('through TypeORM, and idempotent by id inside the transaction as outside', async () => {
    const source = new DataSource({ type: 'postgres', url: testPostgresUrl(), entities: [] });
    await source.initialize();
    try {
      await source.transaction(async (manager) => {
        await manager.query(`INSERT INTO ${orders} (id) VALUES ($1)`, ['o-3']);
        const first = await tasks.submit({ type: 'ship', name: 'o-3', data: { order: 'o-3' } }, { transaction: typeormExecutor(manager) });
        const again = await tasks.submit({ type: 'ship', name: 'o-3', data: { order: 'other' } }, { transaction: typeormExecutor(manager) });
        expect(again).toEqual(first);
      });
    } finally {
      await source.destroy();
    }
    await eventually('the task to run once, with the first submit\'s data', () => shipped.includes('o-3'), { timeoutMs: 10_000 });
    expect(shipped.filter((o) => o === 'other')).toEqual([]);
  });

  it('a transaction of another dialect is refused before any statement', async () => {
    const statements: string[] = [];
    const other = { dialect: 'mysql' as const, query: async (sql: string) => (statements.push(sql), []) };
    await expect(tasks.submit({ type: 'ship', name: 'o-4' }, { transaction: other })).rejects.toThrow(InvalidInputError);
    expect(statements).toEqual([]);
  });
  it('a handler completing its task in its own transaction: the completion and its writes commit together, once', async () => {
    await tasks.submit({ type: 'charge', name: 'c-1', data: { order: 'c-1' } });
    await eventually('the task to be done', async () => (await tasks.get('charge:c-1'))?.state === 'done', { timeoutMs: 10_000 });
    expect(await tasks.get('charge:c-1')).toMatchObject({ result: { charged: 'c-1' } });
    expect((await pool.query(`SELECT id, run FROM ${CHARGES} WHERE id = 'c-1'`)).rows).toEqual([{ id: 'c-1', run: 1 }]);
    expect(chargeRuns.get('c-1')).toBe(1);
  });

  it('a handler whose transaction rolled back after completeIn: the run counts as failed, and the retry commits', async () => {
    await tasks.submit({ type: 'charge', name: 'c-2', data: { order: 'c-2', rollBackFirst: true } });
    await eventually('the task to be done', async () => (await tasks.get('charge:c-2'))?.state === 'done', { timeoutMs: 10_000 });
    const task = await tasks.get('charge:c-2');
    expect(task?.attempts.map((a) => a.outcome)).toEqual(['failed', 'done']);
    expect(task?.attempts[0].error).toContain('did not commit');
    expect((await pool.query(`SELECT id, run FROM ${CHARGES} WHERE id = 'c-2'`)).rows).toEqual([{ id: 'c-2', run: 2 }]);
  });
  it('through Knex (values bound by position): a submit in its transaction, and a handler completing in one', async () => {
    await knexDb!.transaction(async (trx) => {
      await tasks.submit({ type: 'charge-knex', name: 'k-1', data: { order: 'k-1' } }, { transaction: knexExecutor(trx) });
    });
    await eventually('the task to be done', async () => (await tasks.get('charge-knex:k-1'))?.state === 'done', { timeoutMs: 10_000 });
    expect(await tasks.get('charge-knex:k-1')).toMatchObject({ result: { charged: 'k-1' } });
    expect((await pool.query(`SELECT id FROM ${CHARGES} WHERE id = 'k-1'`)).rows).toEqual([{ id: 'k-1' }]);
  });
  it('through TypeORM: a handler completing its task in its transaction', async () => {
    await tasks.submit({ type: 'charge-typeorm', name: 't-1', data: { order: 't-1' } });
    await eventually('the task to be done', async () => (await tasks.get('charge-typeorm:t-1'))?.state === 'done', { timeoutMs: 10_000 });
    expect(await tasks.get('charge-typeorm:t-1')).toMatchObject({ result: { charged: 't-1' } });
    expect((await pool.query(`SELECT id FROM ${CHARGES} WHERE id = 't-1'`)).rows).toEqual([{ id: 't-1' }]);
  });
});
