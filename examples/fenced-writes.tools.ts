import { sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { Knex } from 'knex';
import type { Kysely } from 'kysely';
import type { EntityManager as MikroEntityManager } from '@mikro-orm/postgresql';
import type { Pool as MysqlPool } from 'mysql2/promise';
import type { Pool } from 'pg';
import type { PermitLease } from 'nestjs-gatekeeper';
import { drizzleExecutor, fence, knexExecutor, kyselyExecutor, mikroOrmExecutor, mysql2Executor, pgExecutor } from 'nestjs-gatekeeper/fencing';

/** node-postgres: the client you sent BEGIN on. */
export async function chargeWithPg(pool: Pool, lease: PermitLease): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fence(pgExecutor(client), 'invoices', lease);
    await client.query("UPDATE invoices SET status = 'charged' WHERE status = 'due'");
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** mysql2 on MySQL or MariaDB: the connection you began the transaction on. */
export async function chargeWithMysql2(pool: MysqlPool, lease: PermitLease): Promise<void> {
  const connection = await pool.getConnection();
  try {
    await connection.beginTransaction();
    await fence(mysql2Executor(connection), 'invoices', lease);
    await connection.query("UPDATE invoices SET status = 'charged' WHERE status = 'due'");
    await connection.commit();
  } catch (error) {
    await connection.rollback();
    throw error;
  } finally {
    connection.release();
  }
}

/** Knex: the trx of knex.transaction(). */
export async function chargeWithKnex(knex: Knex, lease: PermitLease): Promise<void> {
  await knex.transaction(async (trx) => {
    await fence(knexExecutor(trx), 'invoices', lease);
    await trx('invoices').where({ status: 'due' }).update({ status: 'charged' });
  });
}

interface Database {
  invoices: { id: number; status: string };
}

/** Kysely: the trx of db.transaction().execute(), and its database's dialect. */
export async function chargeWithKysely(db: Kysely<Database>, lease: PermitLease): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await fence(kyselyExecutor(trx, 'postgres'), 'invoices', lease);
    await trx.updateTable('invoices').set({ status: 'charged' }).where('status', '=', 'due').execute();
  });
}

/** Drizzle: the tx of db.transaction(), and its database's dialect. */
export async function chargeWithDrizzle(db: NodePgDatabase, lease: PermitLease): Promise<void> {
  await db.transaction(async (tx) => {
    await fence(drizzleExecutor(tx, 'postgres'), 'invoices', lease);
    await tx.execute(sql`UPDATE invoices SET status = 'charged' WHERE status = 'due'`);
  });
}

/** MikroORM: the EntityManager of em.transactional(). */
export async function chargeWithMikroOrm(em: MikroEntityManager, lease: PermitLease): Promise<void> {
  await em.transactional(async (tx) => {
    await fence(mikroOrmExecutor(tx), 'invoices', lease);
    await tx.execute("UPDATE invoices SET status = 'charged' WHERE status = 'due'");
  });
}
