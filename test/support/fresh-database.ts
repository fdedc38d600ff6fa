import { createConnection } from 'mysql2/promise';
import { Pool } from 'pg';
import { testMysqlUrl } from './test-mysql';
import { testPostgresUrl } from './test-postgres';

/**
 * A new database on the test run's PostgreSQL or MariaDB server (`name`: letters, digits and _), for what a test
 * runs as a user's data; its URL, and the statements to make its tables (run once, in order).
 */
export async function freshDatabase(dialect: 'postgres' | 'mysql', name: string, tables: readonly string[] = []): Promise<string> {
  const server = dialect === 'postgres' ? testPostgresUrl() : testMysqlUrl();
  const url = new URL(server);
  url.pathname = `/${name}`;
  if (dialect === 'postgres') {
    const admin = new Pool({ connectionString: server, max: 1 });
    await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
    const pool = new Pool({ connectionString: url.toString(), max: 1 });
    try {
      for (const sql of tables) await pool.query(sql);
    } finally {
      await pool.end();
    }
    return url.toString();
  }
  const admin = await createConnection(server);
  await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
  const connection = await createConnection(url.toString());
  try {
    for (const sql of tables) await connection.query(sql);
  } finally {
    await connection.end();
  }
  return url.toString();
}
