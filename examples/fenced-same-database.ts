import type { Pool } from 'pg';
import type { PermitLease } from 'nestjs-gatekeeper';
import { fence, pgExecutor } from 'nestjs-gatekeeper/fencing';

/** Permits on the PostgreSQL backend in the same database: the permit itself is checked on the database's clock too. */
export async function chargeIfStillHeld(pool: Pool, lease: PermitLease): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fence(pgExecutor(client), 'invoices', lease, { checkLease: { schema: 'gatekeeper', mapPrefix: 'gatekeeper' } });
    await client.query("UPDATE invoices SET status = 'charged' WHERE status = 'due'");
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
