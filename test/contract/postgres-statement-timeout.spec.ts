import { Client } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

/**
 * A compare-and-set that waits on a row an operator's open transaction holds: the client gives up at its deadline,
 * and the server cancels the statement then too, so it neither commits late nor keeps its connection.
 */
describe('PostgreSQL statements past their deadline', () => {
  const url = testPostgresUrl();
  const application = `stmt-timeout-${process.pid}`;
  let backend: PostgresBackend;
  let operator: Client;
  let watcher: Client;
  beforeAll(async () => {
    backend = new PostgresBackend({ connectionString: url, mapPrefix: uniquePrefix('stmt'), callTimeoutMs: 1_000, poolConfig: { application_name: application } });
    await backend.open();
    operator = new Client({ connectionString: url });
    watcher = new Client({ connectionString: url });
    await Promise.all([operator.connect(), watcher.connect()]);
  });
  afterAll(async () => {
    await operator?.query('ROLLBACK').catch(() => undefined);
    await Promise.all([operator?.end(), watcher?.end(), backend?.close()]);
  });

  it('are cancelled on the server at the call timeout, while the lock is still held', async () => {
    const map = await backend.map('jobs');
    await map.create('k', 'v1');
    await operator.query('BEGIN');
    await operator.query(`SELECT 1 FROM ${backend.schema}.records WHERE map = $1 AND key = 'k' FOR UPDATE`, [`${backend.mapPrefix}.jobs`]);

    const failure = await map.replace({ key: 'k', value: 'v1' }, 'v2').then(() => undefined, (error: unknown) => error);
    expect(failure instanceof StoreTimeoutError || failure instanceof StoreUnavailableError).toBe(true);
    // The operator still holds the row: only the server's own timeout can have ended the wait.
    const waiting = async () => Number((await watcher.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [application],
    )).rows[0].n);
    await eventually('the statement to stop waiting on the server', async () => (await waiting()) === 0, { timeoutMs: 3_000, intervalMs: 50 });
    await operator.query('ROLLBACK');
    expect(await map.get('k')).toEqual({ key: 'k', value: 'v1' });
  });
});
