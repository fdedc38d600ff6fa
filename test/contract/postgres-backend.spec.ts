import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { REMOVING } from '../../lib/backends/postgres/postgres-schema';
import { describeStoreContracts } from '../../lib/testing';
import { testPostgresUrl } from '../support/test-postgres';

describe('against the test run\'s PostgreSQL server', () => {
  const pool = new Pool({ connectionString: testPostgresUrl(), max: 2 });
  afterAll(async () => {
    await pool.end();
  });

  // The primitives and every capability store over them, two nodes each with a pool of its own, each test in a
  // schema of its own (a loss of data is a whole database's).
  describeStoreContracts('postgres', async () => {
    const schema = `contract_${randomUUID().slice(0, 8)}`;
    const node = () => new PostgresBackend({ connectionString: testPostgresUrl(), schema, callTimeoutMs: 5_000, onLostData: () => undefined });
    return {
      backends: [node(), node()],
      // What a restore from an older backup looks like to the backend: the records and counters of an earlier state,
      // in a database that is not the one they were written in.
      async loseData() {
        await pool.query(`UPDATE ${schema}.incarnation SET identity = 'restored:' || identity`);
        // A restore writes no row through the library: the guard triggers would refuse this DELETE without the setting.
        await pool.query(`BEGIN; SET LOCAL ${REMOVING} = on; DELETE FROM ${schema}.records; COMMIT`);
        await pool.query(`UPDATE ${schema}.counters SET value = 1`);
      },
      async close() {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      },
    };
  }, { timeoutMs: 120_000 });
});
