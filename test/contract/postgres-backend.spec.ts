import { Pool } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { describeStoreContracts } from '../../lib/testing';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

describe('against the test run\'s PostgreSQL server', () => {
  const pool = new Pool({ connectionString: testPostgresUrl(), max: 2 });
  afterAll(async () => {
    await pool.end();
  });

  // The primitives and every capability store over them, two nodes each with a pool of its own, each test under a
  // prefix of its own.
  describeStoreContracts('postgres', async () => {
    const mapPrefix = uniquePrefix('backend');
    const node = () => new PostgresBackend({ connectionString: testPostgresUrl(), mapPrefix, callTimeoutMs: 5_000 });
    return {
      backends: [node(), node()],
      async close() {
        await pool.query('DELETE FROM gatekeeper.records WHERE map LIKE $1', [`${mapPrefix}.%`]);
        await pool.query('DELETE FROM gatekeeper.counters WHERE name LIKE $1', [`${mapPrefix}.%`]);
        await pool.query('DELETE FROM gatekeeper.lost_marks WHERE map LIKE $1', [`${mapPrefix}.%`]);
      },
    };
  }, { timeoutMs: 120_000 });
});
