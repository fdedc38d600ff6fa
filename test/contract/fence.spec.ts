import { randomUUID } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { createPool, type PoolConnection } from 'mysql2/promise';
import { fence, fenceTableSql, FenceWaitTimeoutError, mysql2Executor, pgExecutor, StaleFencingTokenError, type FenceExecutor } from '../../lib/fencing';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { testMysqlUrl } from '../support/test-mysql';

/** What a race needs of one dialect: a transaction per holder, and whether a session waits for a row lock. */
interface Dialect {
  readonly name: 'postgres' | 'mysql';
  /** How often `waitsForLock` may be asked: InnoDB refreshes what it tells of its transactions only once not asked for 0.1 s. */
  readonly pollMs: number;
  begin(isolation?: string): Promise<{ executor: FenceExecutor; run(sql: string): Promise<unknown>; commit(): Promise<void>; rollback(): Promise<void>; session: number }>;
  waitsForLock(session: number): Promise<boolean>;
  token(resource: string): Promise<number | null>;
  close(): Promise<void>;
}

async function postgres(): Promise<Dialect> {
  const pool = new Pool({ connectionString: testPostgresUrl(), max: 6 });
  const schema = `fence_${randomUUID().slice(0, 8)}`;
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(fenceTableSql('postgres', `${schema}.gatekeeper_fences`));
  const open = new Set<PoolClient>();
  return {
    name: 'postgres',
    pollMs: 20,
    async begin(isolation = 'READ COMMITTED') {
      const client = await pool.connect();
      open.add(client);
      await client.query(`SET search_path TO ${schema}`);
      await client.query(`BEGIN ISOLATION LEVEL ${isolation}`);
      const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
      const end = async (sql: string) => {
        await client.query(sql);
        open.delete(client);
        client.release();
      };
      return { executor: pgExecutor(client), run: (sql) => client.query(sql), commit: () => end('COMMIT'), rollback: () => end('ROLLBACK'), session: rows[0].pid };
    },
    async waitsForLock(pid) {
      const { rows } = await pool.query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", [pid]);
      return rows[0]?.wait_event_type === 'Lock';
    },
    async token(resource) {
      const { rows } = await pool.query(`SELECT token FROM ${schema}.gatekeeper_fences WHERE resource = $1`, [resource]);
      return rows.length === 0 ? null : Number(rows[0].token);
    },
    async close() {
      for (const client of open) client.release(true);
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

async function mysql(): Promise<Dialect> {
  const pool = createPool({ uri: testMysqlUrl(), connectionLimit: 6 });
  const table = `fences_${randomUUID().slice(0, 8)}`;
  await pool.query(fenceTableSql('mysql', table));
  const open = new Set<PoolConnection>();
  return {
    name: 'mysql',
    pollMs: 200,
    async begin(isolation = 'REPEATABLE READ') {
      const connection = await pool.getConnection();
      open.add(connection);
      await connection.query(`SET TRANSACTION ISOLATION LEVEL ${isolation}`);
      await connection.beginTransaction();
      const [rows] = await connection.query('SELECT CONNECTION_ID() AS id');
      const end = async (what: 'commit' | 'rollback') => {
        await connection[what]();
        open.delete(connection);
        connection.release();
      };
      const executor = mysql2Executor(connection);
      // This test's own table (the default name is shared by the test run's other files).
      const own: FenceExecutor = { dialect: 'mysql', query: (sql, params) => executor.query(sql.replaceAll('`gatekeeper_fences`', `\`${table}\``), params) };
      return { executor: own, run: (sql) => connection.query(sql.replaceAll('gatekeeper_fences', table)), commit: () => end('commit'), rollback: () => end('rollback'), session: (rows as Array<{ id: number }>)[0].id };
    },
    async waitsForLock(id) {
      const [rows] = await pool.query("SELECT trx_state FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ?", [id]);
      return (rows as Array<{ trx_state: string }>)[0]?.trx_state === 'LOCK WAIT';
    },
    async token(resource) {
      const [rows] = await pool.query(`SELECT token FROM ${table} WHERE resource = ?`, [resource]);
      const found = rows as Array<{ token: number }>;
      return found.length === 0 ? null : Number(found[0].token);
    },
    async close() {
      for (const connection of open) connection.destroy();
      await pool.query(`DROP TABLE ${table}`);
      await pool.end();
    },
  };
}

/*
 * Two holders fencing one resource at once, on the test run's real PostgreSQL and MariaDB: the second's call waits
 * for the first's transaction (the fence row is locked until it ends, as any row it writes), then is accepted if its
 * token is higher and refused if lower. So writes commit in token order, whoever fences first.
 */
describe.each([['postgres', postgres], ['mysql', mysql]] as const)('two holders racing on %s', (_name, open) => {
  let dialect: Dialect;
  beforeAll(async () => {
    dialect = await open();
  });
  afterAll(() => dialect.close());

  it('the older holder first: the newer waits for its commit, then is accepted', async () => {
    const older = await dialect.begin();
    const newer = await dialect.begin();
    expect(await fence(older.executor, 'race-1', 5)).toBe(5);
    const waiting = fence(newer.executor, 'race-1', 6);
    await eventually('the newer holder to wait for the older one\'s row lock', () => dialect.waitsForLock(newer.session), { timeoutMs: 10_000, intervalMs: dialect.pollMs });
    await older.commit();
    await expect(waiting).resolves.toBe(6);
    await newer.commit();
    expect(await dialect.token('race-1')).toBe(6);
  });

  it('the newer holder first: the older waits for its commit, then is refused', async () => {
    const newer = await dialect.begin();
    const older = await dialect.begin();
    expect(await fence(newer.executor, 'race-2', 8)).toBe(8);
    const waiting = fence(older.executor, 'race-2', 7).catch((error: unknown) => error);
    await eventually('the older holder to wait for the newer one\'s row lock', () => dialect.waitsForLock(older.session), { timeoutMs: 10_000, intervalMs: dialect.pollMs });
    await newer.commit();
    const refused = await waiting;
    expect(refused).toBeInstanceOf(StaleFencingTokenError);
    expect(refused).toMatchObject({ resource: 'race-2', token: 7, newer: 8 });
    await older.rollback();
    expect(await dialect.token('race-2')).toBe(8);
  });

  it('transactions of one holder do not wait for each other; a newer holder waits for them all, then is accepted', async () => {
    const first = await dialect.begin();
    await fence(first.executor, 'race-4', 20);
    await first.commit();
    // This process raised race-4 to 20: its next transactions with 20 read the fence under a shared lock.
    const [one, two] = [await dialect.begin(), await dialect.begin()];
    expect(await fence(one.executor, 'race-4', 20)).toBe(20);
    expect(await fence(two.executor, 'race-4', 20)).toBe(20);
    const newer = await dialect.begin();
    const waiting = fence(newer.executor, 'race-4', 21);
    await eventually('the newer holder to wait for the older one\'s transactions', () => dialect.waitsForLock(newer.session), { timeoutMs: 10_000, intervalMs: dialect.pollMs });
    await one.commit();
    expect(await dialect.waitsForLock(newer.session)).toBe(true);
    await two.commit();
    await expect(waiting).resolves.toBe(21);
    await newer.commit();
    // And a transaction of the older holder after it is refused, through the shared read too.
    const late = await dialect.begin();
    await expect(fence(late.executor, 'race-4', 20)).rejects.toMatchObject({ name: 'StaleFencingTokenError', newer: 21 });
    await late.rollback();
  });

  it("an older holder's next transaction meets a newer holder's raise: waits for it, then is accepted if it rolled back, refused if it committed", async () => {
    const first = await dialect.begin();
    await fence(first.executor, 'race-5', 30);
    await first.commit();
    // This process raised race-5 to 30: its next fences with 30 take the shared read, which meets the lock of the
    // newer holder's raise (in another process: its statement, which leaves this process's memory of 30 as it was).
    for (const [newerToken, ends] of [[31, 'rollback'], [32, 'commit']] as const) {
      const newer = await dialect.begin();
      await newer.run(`UPDATE gatekeeper_fences SET token = ${newerToken} WHERE resource = 'race-5'`);
      const older = await dialect.begin();
      const waiting = fence(older.executor, 'race-5', 30).catch((error: unknown) => error);
      await eventually('the older holder to wait for the newer one\'s raise', () => dialect.waitsForLock(older.session), { timeoutMs: 10_000, intervalMs: dialect.pollMs });
      await newer[ends]();
      if (ends === 'rollback') {
        await expect(waiting).resolves.toBe(30);
        await older.commit();
        expect(await dialect.token('race-5')).toBe(30);
      } else {
        expect(await waiting).toMatchObject({ name: 'StaleFencingTokenError', token: 30, newer: 32 });
        await older.rollback();
        expect(await dialect.token('race-5')).toBe(32);
      }
    }
  });

  it('a newer holder that rolls back leaves the older one accepted', async () => {
    const newer = await dialect.begin();
    const older = await dialect.begin();
    await fence(newer.executor, 'race-3', 10);
    const waiting = fence(older.executor, 'race-3', 9);
    await eventually('the older holder to wait', () => dialect.waitsForLock(older.session), { timeoutMs: 10_000, intervalMs: dialect.pollMs });
    await newer.rollback();
    await expect(waiting).resolves.toBe(9);
    await older.commit();
    expect(await dialect.token('race-3')).toBe(9);
  });
});

/*
 * A holder whose transaction took its snapshot before the newer holder committed (InnoDB's default REPEATABLE READ,
 * a read first): the fence reads the resource's highest token as committed now, not as the snapshot has it.
 */
describe('a stale holder whose transaction read before the newer holder committed', () => {
  it('on MySQL (REPEATABLE READ): refused by the locking read', async () => {
    const dialect = await mysql();
    try {
      const seed = await dialect.begin();
      await fence(seed.executor, 'snapshot', 3);
      await seed.commit();
      const older = await dialect.begin();
      await older.run('SELECT token FROM gatekeeper_fences'); // its snapshot: token 3
      const newer = await dialect.begin();
      await fence(newer.executor, 'snapshot', 8);
      await newer.commit();
      await expect(fence(older.executor, 'snapshot', 7)).rejects.toMatchObject({ name: 'StaleFencingTokenError', token: 7, newer: 8 });
      await older.rollback();
      expect(await dialect.token('snapshot')).toBe(8);
    } finally {
      await dialect.close();
    }
  });

  it('on PostgreSQL (REPEATABLE READ): the write fails, by the database\'s serialization check', async () => {
    const dialect = await postgres();
    try {
      const seed = await dialect.begin();
      await fence(seed.executor, 'snapshot', 3);
      await seed.commit();
      const older = await dialect.begin('REPEATABLE READ');
      await older.run('SELECT token FROM gatekeeper_fences');
      const newer = await dialect.begin();
      await fence(newer.executor, 'snapshot', 8);
      await newer.commit();
      await expect(fence(older.executor, 'snapshot', 7)).rejects.toMatchObject({ code: '40001' });
      await older.rollback();
      expect(await dialect.token('snapshot')).toBe(8);
    } finally {
      await dialect.close();
    }
  });
});

/*
 * On PostgreSQL a refusal also fails the transaction itself: a caller that catches StaleFencingTokenError and
 * commits anyway commits nothing (PostgreSQL answers the COMMIT of a failed transaction with a rollback).
 */
describe('a refusal swallowed by the caller, on PostgreSQL', () => {
  it('still commits nothing of the transaction', async () => {
    const pool = new Pool({ connectionString: testPostgresUrl(), max: 2 });
    const schema = `fence_${randomUUID().slice(0, 8)}`;
    try {
      await pool.query(`CREATE SCHEMA ${schema}`);
      await pool.query(`CREATE TABLE ${schema}.notes (note text)`);
      await pool.query(fenceTableSql('postgres', `${schema}.gatekeeper_fences`));
      await pool.query(`INSERT INTO ${schema}.gatekeeper_fences (resource, token) VALUES ('swallowed', 9)`);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`INSERT INTO ${schema}.notes VALUES ('stale write')`);
        const refused = await fence(pgExecutor(client), 'swallowed', 4, { table: `${schema}.gatekeeper_fences` }).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(StaleFencingTokenError);
        const commit = await client.query('COMMIT');
        expect(commit.command).toBe('ROLLBACK');
      } finally {
        client.release();
      }
      expect((await pool.query(`SELECT note FROM ${schema}.notes`)).rows).toEqual([]);
    } finally {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    }
  });
});

/*
 * No unbounded wait behind another holder's open transaction. A fence waits at most 2 × `maxWait`, then throws
 * FenceWaitTimeoutError: its transaction failed on PostgreSQL, rolled back on MariaDB (whole seconds there). On
 * PostgreSQL, with `maxIdle`, a fenced transaction that sits idle that long is ended by the server (a frozen
 * holder's: it commits nothing, and the row is free for the newer one). The transaction's own `lock_timeout` is as it
 * was after a fence.
 */
describe('bounded waits behind another holder', () => {
  it('on PostgreSQL: an idle older holder\'s transaction is ended after maxIdle, and the newer one goes on', async () => {
    const dialect = await postgres();
    try {
      const older = await dialect.begin();
      await fence(older.executor, 'idle-older', 5, { maxIdle: 500 });
      const newer = await dialect.begin();
      const started = Date.now();
      await expect(fence(newer.executor, 'idle-older', 6, { maxWait: 500 })).resolves.toBe(6);
      const waited = Date.now() - started;
      expect(waited).toBeLessThan(1_000);
      await newer.commit();
      // The older holder's session was ended by the server: its COMMIT lands nothing.
      await expect(older.commit()).rejects.toThrow();
      expect(await dialect.token('idle-older')).toBe(6);
    } finally {
      await dialect.close();
    }
  });

  it('on PostgreSQL: behind an idle older holder without maxIdle, the newer gives up after 2 × maxWait, naming the resource', async () => {
    const dialect = await postgres();
    try {
      const older = await dialect.begin();
      await fence(older.executor, 'idle-kept', 5);
      const newer = await dialect.begin();
      const started = Date.now();
      const gaveUp = await fence(newer.executor, 'idle-kept', 6, { maxWait: 300 }).catch((error: unknown) => error);
      expect(Date.now() - started).toBeGreaterThanOrEqual(590);
      expect(gaveUp).toMatchObject({ name: 'FenceWaitTimeoutError', resource: 'idle-kept', token: 6, waitedMs: 600 });
      await newer.rollback();
      await older.commit();
      expect(await dialect.token('idle-kept')).toBe(5);
    } finally {
      await dialect.close();
    }
  });

  it('on PostgreSQL: behind a transaction still at work, the fence gives up after 2 × maxWait, naming the resource', async () => {
    const dialect = await postgres();
    try {
      const older = await dialect.begin();
      await fence(older.executor, 'busy-older', 5, { maxWait: 300, maxIdle: 300 });
      const working = older.run('SELECT pg_sleep(2)');
      const newer = await dialect.begin();
      await newer.run("SET LOCAL lock_timeout = '7s'");
      const started = Date.now();
      const gaveUp = await fence(newer.executor, 'busy-older', 6, { maxWait: 300 }).catch((error: unknown) => error);
      expect(Date.now() - started).toBeGreaterThanOrEqual(590);
      expect(gaveUp).toBeInstanceOf(FenceWaitTimeoutError);
      expect(gaveUp).toMatchObject({ resource: 'busy-older', token: 6, waitedMs: 600 });
      await working;
      await newer.rollback();
      await older.commit();
      expect(await dialect.token('busy-older')).toBe(5);
    } finally {
      await dialect.close();
    }
  });

  it('on PostgreSQL: the transaction\'s own lock_timeout is as it was after a fence, raised or shared', async () => {
    const dialect = await postgres();
    try {
      for (let round = 0; round < 2; round++) {
        const tx = await dialect.begin();
        await tx.run("SET LOCAL lock_timeout = '7s'");
        await fence(tx.executor, 'restored', 4);
        const shown = (await tx.run('SHOW lock_timeout')) as { rows: Array<{ lock_timeout: string }> };
        expect(shown.rows[0].lock_timeout).toBe('7s');
        await tx.commit();
      }
    } finally {
      await dialect.close();
    }
  });

  it('on MariaDB: the fence gives up after 2 × maxWait, its transaction rolled back', async () => {
    const dialect = await mysql();
    try {
      const older = await dialect.begin();
      await fence(older.executor, 'busy-older', 5, { maxWait: 500 });
      const newer = await dialect.begin();
      await newer.run("INSERT INTO gatekeeper_fences (resource, token) VALUES ('newer-own-write', 1)");
      const started = Date.now();
      const gaveUp = await fence(newer.executor, 'busy-older', 6, { maxWait: 500 }).catch((error: unknown) => error);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(gaveUp).toBeInstanceOf(FenceWaitTimeoutError);
      expect(gaveUp).toMatchObject({ resource: 'busy-older', token: 6 });
      await newer.commit();
      await older.commit();
      expect(await dialect.token('busy-older')).toBe(5);
      expect(await dialect.token('newer-own-write')).toBeNull();
    } finally {
      await dialect.close();
    }
  });
});

/*
 * pgExecutor runs the fence's own statements as named prepared statements of the connection. A server connection
 * that does not know one the client prepared (what a pooler without prepared statements does to a client) fails the
 * transaction with a message that names the way out; `{ prepare: false }` prepares nothing.
 */
describe('the fence\'s prepared statements, on PostgreSQL', () => {
  let pool: Pool;
  let schema: string;
  beforeAll(async () => {
    pool = new Pool({ connectionString: testPostgresUrl(), max: 2 });
    schema = `fence_${randomUUID().slice(0, 8)}`;
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(fenceTableSql('postgres', `${schema}.gatekeeper_fences`));
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  });

  const prepared = async (client: PoolClient) =>
    (await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'gatekeeper\\_fence\\_%' ORDER BY name")).rows.map((r) => r.name);

  it('are parsed once per connection and run by name; a server connection that lost them fails the transaction, naming prepare: false', async () => {
    const client = await pool.connect();
    try {
      const table = { table: `${schema}.gatekeeper_fences` };
      for (let i = 0; i < 3; i++) {
        await client.query('BEGIN');
        await fence(pgExecutor(client), 'prepared', 4, table);
        await client.query('COMMIT');
      }
      // The first fence raised (one statement), the next two read shared (another): two named statements, each once.
      expect(await prepared(client)).toHaveLength(2);
      // As a pooler's other server connection: it never saw them, while node-postgres believes it did.
      await client.query('DEALLOCATE ALL');
      await client.query('BEGIN');
      const refused = fence(pgExecutor(client), 'prepared', 5, table);
      await expect(refused).rejects.toThrow(/pgExecutor\(client, options\)\.prepare.*does not know it.*\{ prepare: false \}.*wrote nothing/);
      await client.query('ROLLBACK');
      expect((await pool.query(`SELECT token FROM ${schema}.gatekeeper_fences WHERE resource = 'prepared'`)).rows[0].token).toBe('4');
    } finally {
      client.release(true);
    }
  });

  it('are not prepared with { prepare: false }, and a bad prepare is named', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await fence(pgExecutor(client, { prepare: false }), 'unprepared', 4, { table: `${schema}.gatekeeper_fences` });
      await client.query('COMMIT');
      expect(await prepared(client)).toEqual([]);
      expect(() => pgExecutor(client, { prepare: 'yes' as unknown as boolean })).toThrow(/pgExecutor\(client, options\)\.prepare.*must be true or false, got "yes"/);
    } finally {
      client.release(true);
    }
  });
});
