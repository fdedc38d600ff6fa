import { Client } from 'pg';
import { migrate, sweepExpired } from '../../lib/backends/postgres/postgres-schema';
import { testPostgresUrl } from '../support/test-postgres';

/**
 * The sweep of expired records against a renewal of the same record: the renewal holds the row when the sweep picks
 * it, and commits while the sweep waits for it. The renewed record must stay (an acknowledged write), the others
 * past their TTL must go.
 */
describe('PostgreSQL sweep of expired records', () => {
  const schema = `sweep_${Date.now().toString(36)}`;
  const clients: Client[] = [];
  const connect = async () => {
    const client = new Client({ connectionString: testPostgresUrl() });
    await client.connect();
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await clients[0]?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await Promise.all(clients.map((c) => c.end()));
  });

  it('leaves a record renewed while the sweep waited for it, and drops the expired rest', async () => {
    const [admin, renewer, sweeper] = [await connect(), await connect(), await connect()];
    const migrating = await connect();
    await migrate(migrating as never, schema, `${schema}_changes`);
    const past = "clock_timestamp() - interval '1 second'";
    await admin.query(`INSERT INTO ${schema}.records (map, key, value, expires_at) VALUES ('m', 'renewed', 'old', ${past}), ('m', 'gone', 'old', ${past})`);

    // A renewal (a create over the expired record, as RecordMap.create does) holds the row, uncommitted.
    await renewer.query('BEGIN');
    await renewer.query(`UPDATE ${schema}.records SET value = 'new', expires_at = clock_timestamp() + interval '1 hour' WHERE map = 'm' AND key = 'renewed'`);
    // The plan a big table with few expired rows gets: a nested loop fetching each picked row by its ctid (Tid Scan).
    await sweeper.query('SET enable_hashjoin = off');
    await sweeper.query('SET enable_mergejoin = off');
    // The sweep picks both rows as expired, and waits for the renewal's lock.
    const swept = sweeper.query(sweepExpired(schema));
    const sweepWaits = async () => Number((await admin.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM%'",
    )).rows[0].n) > 0;
    const deadline = Date.now() + 10_000;
    while (!(await sweepWaits()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    // Else the sweep ran before or after the renewal, and this run proves nothing.
    expect(await sweepWaits()).toBe(true);
    await renewer.query('COMMIT');
    const { rowCount } = await swept;

    const left = await admin.query<{ key: string; value: string }>(`SELECT key, value FROM ${schema}.records WHERE map = 'm' ORDER BY key`);
    expect(left.rows).toEqual([{ key: 'renewed', value: 'new' }]);
    expect(rowCount).toBe(1);
  });
});
