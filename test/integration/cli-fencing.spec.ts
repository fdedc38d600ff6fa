import { createConnection } from 'mysql2/promise';
import { Pool } from 'pg';
import { fence, mysql2Executor, pgExecutor } from '../../lib/fencing';
import { cli } from '../support/cli-process';
import { freshDatabase } from '../support/fresh-database';

/*
 * `fencing sql` prints the migration of the fence table, contacting nothing: run on a fresh database of the test
 * run's PostgreSQL and MariaDB, fence() works on what it made; a bad flag exits 2 naming it.
 */
describe('nestjs-gatekeeper fencing sql', () => {
  it('prints SQL that makes a fence table fence() works on, in PostgreSQL', async () => {
    const { code, stdout } = await cli(['fencing', 'sql', '--dialect', 'postgres']);
    expect(code).toBe(0);
    expect(stdout).toContain('CREATE TABLE IF NOT EXISTS "gatekeeper_fences"');
    const pool = new Pool({ connectionString: await freshDatabase('postgres', `cli_fence_${Date.now()}`, [stdout]), max: 1 });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      expect(await fence(pgExecutor(client), 'invoices', 3)).toBe(3);
      await client.query('COMMIT');
    } finally {
      client.release();
      await pool.end();
    }
  });

  it('prints SQL that makes a fence table fence() works on, in MySQL and MariaDB', async () => {
    const { code, stdout } = await cli(['fencing', 'sql', '--dialect', 'mysql', '--table', 'app_fences']);
    expect(code).toBe(0);
    expect(stdout).toContain('CREATE TABLE IF NOT EXISTS `app_fences`');
    const connection = await createConnection(await freshDatabase('mysql', `cli_fence_${Date.now()}`, [stdout]));
    try {
      await connection.beginTransaction();
      expect(await fence(mysql2Executor(connection), 'invoices', 3, { table: 'app_fences' })).toBe(3);
      await connection.commit();
    } finally {
      await connection.end();
    }
  });

  it('refuses a table that is no table name, and a dialect it does not speak, exiting 2', async () => {
    const table = await cli(['fencing', 'sql', '--dialect', 'postgres', '--table', 'fences; DROP TABLE invoices']);
    expect(table.code).toBe(2);
    expect(table.stderr).toContain('invalid --table: must be a table name');
    const dialect = await cli(['fencing', 'sql', '--dialect', 'sqlite']);
    expect(dialect.code).toBe(2);
    expect(dialect.stderr).toContain("argument 'sqlite' is invalid. Allowed choices are postgres, mysql.");
  });
});
