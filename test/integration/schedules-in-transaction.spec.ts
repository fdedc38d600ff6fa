import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { ClusterSingleton, GatekeeperModule, InvalidInputError, ScheduleHandler, ScheduleService } from '../../lib';
import { pgExecutor } from '../../lib/fencing';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

const ran: string[] = [];
let invoiced = 0;

@Injectable()
class TenantReports {
  @ScheduleHandler('tenant-report')
  report(data: { tenant: string }): void {
    ran.push(data.tenant);
  }

  /** A job with no schedule of its own here: it runs only when asked to run now. */
  @ClusterSingleton('tx-invoicing', '20s')
  invoice(): void {
    invoiced++;
  }
}

/*
 * Runtime schedules changed inside the application's own transaction, on the test run's PostgreSQL: a tenant's row
 * and its schedule in one transaction. Rolled back: no schedule; committed: stored, heard and run; a pause in the
 * same way; on the memory backend, refused before anything is written. And a run now requested in the transaction:
 * none if it rolls back, one run once it commits.
 */
describe('a runtime schedule changed in the application\'s transaction (PostgreSQL)', () => {
  const pool = new Pool({ connectionString: testPostgresUrl(), max: 4 });
  const tenants = `tenants_${randomUUID().slice(0, 8)}`;
  const mapPrefix = uniquePrefix('tx-schedules');
  /** The run requests stored, as the database holds them. */
  const requests = async () => Number((await pool.query("SELECT count(*) AS n FROM gatekeeper.records WHERE map = $1", [`${mapPrefix}.job-requests`])).rows[0].n);
  let app: INestApplicationContext;
  let schedules: ScheduleService;

  beforeAll(async () => {
    await pool.query(`CREATE TABLE ${tenants} (id text PRIMARY KEY)`);
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'postgres', postgres: { mapPrefix }, identity: { acquirer: 'tx-node' } })],
      providers: [TenantReports],
    }).setLogger(new CapturingLogger()).compile();
    await (app as unknown as { init(): Promise<unknown> }).init();
    schedules = app.get(ScheduleService);
  });
  afterAll(async () => {
    await app.close();
    await pool.query(`DROP TABLE ${tenants}`);
    await pool.end();
  });

  async function inTransaction(outcome: 'commit' | 'rollback', body: (client: PoolClient) => Promise<void>): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await body(client);
      await client.query(outcome === 'commit' ? 'COMMIT' : 'ROLLBACK');
    } finally {
      client.release();
    }
  }

  const tenant = (client: PoolClient, id: string) => client.query(`INSERT INTO ${tenants} (id) VALUES ($1)`, [id]);
  const upsert = (client: PoolClient, id: string) =>
    schedules.upsert({ id: `report-${id}`, cron: '* * * * * *', handler: 'tenant-report', data: { tenant: id }, duration: '3s' }, { transaction: pgExecutor(client) });

  it('rolled back: neither the tenant nor its schedule', async () => {
    await inTransaction('rollback', async (client) => {
      await tenant(client, 'acme');
      expect(await upsert(client, 'acme')).toMatchObject({ outcome: 'created' });
    });
    expect(await schedules.schedule('report-acme')).toBeUndefined();
  });

  it('committed: stored with the tenant, unseen before the commit, then heard and run', async () => {
    await inTransaction('commit', async (client) => {
      await tenant(client, 'globex');
      await upsert(client, 'globex');
      expect(await schedules.schedule('report-globex')).toBeUndefined();
    });
    expect(await schedules.schedule('report-globex')).toMatchObject({ id: 'report-globex', definition: { handler: 'tenant-report' } });
    await eventually('the schedule to run', () => ran.includes('globex'), { timeoutMs: 10_000 });
  });

  it('a pause in a transaction that rolls back changes nothing; committed, it pauses', async () => {
    await inTransaction('rollback', async (client) => {
      await schedules.pause('report-globex', { transaction: pgExecutor(client) });
    });
    expect((await schedules.schedule('report-globex'))?.definition.paused).not.toBe(true);
    await inTransaction('commit', async (client) => {
      expect(await schedules.pause('report-globex', { transaction: pgExecutor(client) })).toMatchObject({ outcome: 'updated' });
    });
    expect((await schedules.schedule('report-globex'))?.definition.paused).toBe(true);
  });

  it('a run requested in a transaction that rolls back never runs; committed, it runs once', async () => {
    await inTransaction('rollback', async (client) => {
      await tenant(client, 'initech');
      expect(await schedules.runNow('TenantReports.invoice', { transaction: pgExecutor(client), timeout: '5s' })).toMatchObject({ job: 'TenantReports.invoice' });
    });
    // Nothing was requested: no request is stored, and the job has not run.
    expect(await requests()).toBe(0);
    expect(invoiced).toBe(0);
    await inTransaction('commit', async (client) => {
      await tenant(client, 'initech');
      expect(await schedules.runNow('TenantReports.invoice', { transaction: pgExecutor(client), timeout: '5s' })).toMatchObject({ requestId: expect.any(String) });
      expect(invoiced).toBe(0); // not before the commit
    });
    expect(await requests()).toBe(1);
    await eventually('the requested run', () => invoiced === 1, { timeoutMs: 10_000 });
  });

  it('on the memory backend, refused before anything is written', async () => {
    const memory = await Test.createTestingModule({ imports: [GatekeeperModule.forRoot({ backend: 'memory' })] }).setLogger(new CapturingLogger()).compile();
    try {
      const statements: string[] = [];
      const transaction = { dialect: 'postgres' as const, query: async (sql: string) => (statements.push(sql), []) };
      await expect(memory.get(ScheduleService).upsert({ id: 'x', cron: '* * * * * *', handler: 'tenant-report', duration: '3s' }, { transaction })).rejects.toThrow(InvalidInputError);
      expect(statements).toEqual([]);
    } finally {
      await memory.close();
    }
  });
});
