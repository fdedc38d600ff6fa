import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { sweepExpired } from '../../lib/backends/postgres/postgres-schema';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';

/** The tables whose rows only the library removes. */
const GUARDED = ['records', 'tasks', 'counters', 'lost_marks', 'incarnation', 'forget_on_restore'];

/**
 * Only the library removes the rows of its schema (issue 47): an operator's `DELETE` or `TRUNCATE` is refused with an
 * error that says what to do instead, whatever `session_replication_role` says, while the library's own removals
 * (remove, delete, the sweep of expired rows) go through. A schema of the test's own on the test run's server.
 */
describe('PostgreSQL: removals the library did not make are refused', () => {
  const schema = `guard_${randomUUID().slice(0, 8)}`;
  const admin = new Pool({ connectionString: testPostgresUrl(), max: 1 });
  const backend = new PostgresBackend({ connectionString: testPostgresUrl(), schema, onLostData: () => undefined });
  const refusal = (sql: string) => admin.query(sql).then(() => undefined, (error: Error & { code?: string; hint?: string }) => error);
  beforeAll(async () => {
    await backend.open();
    const map = await backend.map('leases', { forgetOnRestore: true });
    await map.create('billing', '{"v":1}');
    await (await backend.counters()).next('tokens');
  });
  afterAll(async () => {
    await backend.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('refuses DELETE and TRUNCATE of every table, naming it and what to do instead', async () => {
    await admin.query(`INSERT INTO ${schema}.lost_marks (map, key, at) VALUES ('x', 'y', 1)`);
    await admin.query(`INSERT INTO ${schema}.tasks (map, key, value) VALUES ('x', 'y', '{"type":"t","state":"pending"}')`);
    for (const table of GUARDED) {
      // A row in each, so a row trigger has something to refuse.
      const rows = Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.${table}`)).rows[0].n);
      expect(rows).toBeGreaterThan(0);
      for (const sql of [`DELETE FROM ${schema}.${table}`, `TRUNCATE ${schema}.${table}`]) {
        const error = await refusal(sql);
        expect(error).toBeDefined();
        expect(error!.code).toBe('23001');
        expect(error!.message).toBe(`nestjs-gatekeeper: ${sql.split(' ')[0]} on ${schema}.${table} refused: only nestjs-gatekeeper removes its rows`);
        expect(error!.hint).toContain('pause <name>');
        expect(error!.hint).toContain(`stop every node, then DROP SCHEMA ${schema} CASCADE`);
      }
    }
    expect(Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.records WHERE key = 'billing'`)).rows[0].n)).toBe(1);
  });

  it('refuses them under session_replication_role = replica too (the triggers fire always)', async () => {
    const error = await refusal(`BEGIN; SET LOCAL session_replication_role = replica; DELETE FROM ${schema}.records; COMMIT`);
    await admin.query('ROLLBACK').catch(() => undefined);
    expect(error?.message).toContain('refused');
  });

  it('lets the library\'s own removals through', async () => {
    const map = await backend.map('leases', { forgetOnRestore: true });
    expect(await map.create('gone', '{"v":2}')).toBe(true);
    expect(await map.remove({ key: 'gone', value: '{"v":2}' })).toBe(true);
    await map.put('mine', '{"v":3}');
    await map.delete('mine');
    await map.create('short', '{"v":4}', { ttlMs: 1 });
    // The backend's sweep of expired rows, as its timer runs it.
    await eventually('the sweep to drop the expired row', async () => {
      await admin.query(sweepExpired(schema));
      return (await admin.query(`SELECT 1 FROM ${schema}.records WHERE key = 'short'`)).rowCount === 0;
    }, { timeoutMs: 5_000, intervalMs: 10 });
    expect((await map.list()).map((r) => r.key)).toEqual(['billing']);
  });
});
