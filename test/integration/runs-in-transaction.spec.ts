import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { ClusterSingleton, GatekeeperModule, GatekeeperService, InvalidInputError, ScheduleService, SemaphoreAdminService } from '../../lib';
import { fenceTableSql, pgExecutor, typeormExecutor } from '../../lib/fencing';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

const suffix = randomUUID().slice(0, 8);
/** The app's table, and a fence table of this test's own. */
const INVOICES = `invoices_${suffix}`;
const FENCES = `fences_${suffix}`;
const MAP_PREFIX = uniquePrefix('tx-runs');
let pool: Pool;
let typeormSource: DataSource;
/** What the next run of `Billing.bill` does with its transaction. */
let plan: { id: string; end: 'commit' | 'rollback' | 'swallow-rollback' | 'revoked-before-commit' } = { id: '', end: 'commit' };
/** What completeRunIn threw in the last run, if anything. */
let thrown: unknown;

@Injectable()
class Billing {
  constructor(private readonly schedules: ScheduleService, private readonly admin: SemaphoreAdminService, private readonly gatekeeper: GatekeeperService) {}

  /** One invoice and the run's record in one pg transaction, ended as the plan says. */
  @ClusterSingleton('tx-billing', '10s')
  async bill(): Promise<void> {
    const { id, end } = plan;
    const client: PoolClient = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${INVOICES} (id) VALUES ($1)`, [id]);
      await this.schedules.completeRunIn(pgExecutor(client), { table: FENCES });
      if (end === 'revoked-before-commit') {
        // The permit taken away (force-released) between the record and the COMMIT: the COMMIT must fail.
        await this.admin.forceRelease('tx-billing', this.gatekeeper.currentPermit()!.fencingToken);
        await eventually('the lease to learn its permit is gone', () => !this.gatekeeper.currentLease()!.isValid(), { timeoutMs: 5_000 });
      }
      if (end === 'commit' || end === 'revoked-before-commit') await client.query('COMMIT');
      else await client.query('ROLLBACK');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (end !== 'swallow-rollback') throw error;
    } finally {
      client.release();
    }
    if (end === 'rollback') throw new Error('rolled back on purpose');
  }

  /** The same through TypeORM's transaction, as the docs show it. */
  @ClusterSingleton('tx-billing', '10s')
  async billThroughTypeorm(): Promise<void> {
    await typeormSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO ${INVOICES} (id) VALUES ($1)`, [plan.id]);
      await this.schedules.completeRunIn(typeormExecutor(manager), { table: FENCES });
    });
  }

  /** Not a run: no permit, no history to write. */
  async outsideARun(): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await this.schedules.completeRunIn(pgExecutor(client), { table: FENCES }).catch((error: unknown) => (thrown = error));
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  }
}

/** The run history of `job` as the store holds it now (the record written in the transaction, not this node's memory). */
async function storedRuns(job: string): Promise<Array<{ id: string; outcome: string; error?: string; token: number }>> {
  const { rows } = await pool.query('SELECT value FROM gatekeeper.records WHERE map = $1 AND key = $2', [`${MAP_PREFIX}.job-runs`, job]);
  return rows.length === 0 ? [] : (JSON.parse(rows[0].value as string) as { runs: Array<{ id: string; outcome: string; error?: string; token: number }> }).runs;
}

async function invoice(id: string): Promise<boolean> {
  return (await pool.query(`SELECT 1 FROM ${INVOICES} WHERE id = $1`, [id])).rowCount === 1;
}

/*
 * A @ClusterSingleton run whose writes and history record commit together (ScheduleService.completeRunIn), on the
 * test run's PostgreSQL: permits, history and the app's table in one database, the flush of the history a minute away
 * so that only the transaction can have written the record the test reads from the store.
 */
describe('a @ClusterSingleton run completed in the application\'s transaction (PostgreSQL)', () => {
  let app: INestApplicationContext;
  let billing: Billing;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testPostgresUrl(), max: 4 });
    await pool.query(`CREATE TABLE ${INVOICES} (id text PRIMARY KEY)`);
    await pool.query(fenceTableSql('postgres', FENCES));
    typeormSource = await new DataSource({ type: 'postgres', url: testPostgresUrl(), entities: [], poolSize: 2 }).initialize();
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend: 'postgres', postgres: { mapPrefix: MAP_PREFIX }, identity: { acquirer: 'tx-node' },
        definitions: [{ name: 'tx-billing', permits: 1, duration: '10s' }],
        schedules: { history: { flushInterval: '60s' } },
      })],
      providers: [Billing],
    }).setLogger(new CapturingLogger()).compile();
    await (app as unknown as { init(): Promise<unknown> }).init();
    billing = app.get(Billing);
  });
  afterAll(async () => {
    await app?.close();
    await typeormSource?.destroy();
    await pool.query(`DROP TABLE IF EXISTS ${INVOICES}`);
    await pool.query(`DROP TABLE IF EXISTS ${FENCES}`);
    await pool.end();
  });

  it('committed: the store says completed at once, with the invoice; the fence row holds the run\'s token', async () => {
    plan = { id: 'inv-1', end: 'commit' };
    await billing.bill();
    expect(await invoice('inv-1')).toBe(true);
    const [run] = await storedRuns('Billing.bill');
    expect(run).toMatchObject({ outcome: 'completed' });
    const { rows } = await pool.query(`SELECT token FROM ${FENCES} WHERE resource = 'tx-billing'`);
    expect(Number(rows[0].token)).toBe(run.token);
  });

  it('through TypeORM: the same', async () => {
    plan = { id: 'inv-typeorm', end: 'commit' };
    await billing.billThroughTypeorm();
    expect(await invoice('inv-typeorm')).toBe(true);
    expect((await storedRuns('Billing.billThroughTypeorm'))[0]).toMatchObject({ outcome: 'completed' });
  });

  it('rolled back: neither the invoice nor the record; the run is written failed with its error', async () => {
    const before = (await storedRuns('Billing.bill')).length;
    plan = { id: 'inv-2', end: 'rollback' };
    await expect(billing.bill()).rejects.toThrow('rolled back on purpose');
    expect(await invoice('inv-2')).toBe(false);
    expect(await storedRuns('Billing.bill')).toHaveLength(before);
    await flush(app);
    expect((await storedRuns('Billing.bill'))[0]).toMatchObject({ outcome: 'failed', error: 'rolled back on purpose' });
  });

  it('rolled back by a method that returns anyway: written failed, saying the transaction did not commit', async () => {
    plan = { id: 'inv-3', end: 'swallow-rollback' };
    await billing.bill();
    expect(await invoice('inv-3')).toBe(false);
    await flush(app);
    expect((await storedRuns('Billing.bill'))[0]).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/did not commit/) });
  });

  it('the permit taken away before COMMIT: the COMMIT fails (GK001), nothing lands, the run is not completed', async () => {
    plan = { id: 'inv-4', end: 'revoked-before-commit' };
    await expect(billing.bill()).rejects.toMatchObject({ code: 'GK001' });
    expect(await invoice('inv-4')).toBe(false);
    await flush(app);
    const [run] = await storedRuns('Billing.bill');
    expect(run.outcome).not.toBe('completed');
  });

  it('outside a run: InvalidInputError naming the call', async () => {
    thrown = undefined;
    await billing.outsideARun();
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect((thrown as InvalidInputError).message).toMatch(/completeRunIn.*@ClusterSingleton run/);
  });
});

@Injectable()
class MemoryBilling {
  /** The statements completeRunIn sent (none may be sent when it refuses). */
  readonly sent: string[] = [];

  constructor(private readonly schedules: ScheduleService) {}

  @ClusterSingleton('memory-billing', '10s')
  async bill(): Promise<unknown> {
    const transaction = { dialect: 'postgres', query: async (sql: string) => { this.sent.push(sql); return []; } };
    return this.schedules.completeRunIn(transaction).then(() => undefined, (error: unknown) => error);
  }
}

describe('completeRunIn with the run history elsewhere than PostgreSQL', () => {
  it('is refused with InvalidInputError naming `transaction`, before any statement', async () => {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', definitions: [{ name: 'memory-billing', permits: 1, duration: '10s' }] })],
      providers: [MemoryBilling],
    }).setLogger(new CapturingLogger()).compile();
    await (app as unknown as { init(): Promise<unknown> }).init();
    try {
      const billing = app.get(MemoryBilling);
      const error = await billing.bill();
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ field: 'transaction', message: expect.stringMatching(/history is on PostgreSQL/) });
      expect(billing.sent).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

/** Has the node write what it holds of the run history now (the test's flush interval is a minute). */
async function flush(app: INestApplicationContext): Promise<void> {
  const { SchedulesRuntime } = await import('../../lib/nest/schedules/schedules.runtime');
  await app.get(SchedulesRuntime).recorder.flush();
}
