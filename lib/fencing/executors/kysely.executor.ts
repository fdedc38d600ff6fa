import type { FenceDialect, FenceExecutor } from '../fence-executor';
import { notATransaction, rowsOf } from './executor-input';
import { peer } from './peer';

/** What `kyselyExecutor` needs of Kysely: a `Transaction`. */
export interface KyselyQueryable {
  /** Runs a compiled query in the transaction. */
  executeQuery(query: unknown): Promise<{ rows: unknown[] }>;
  /** True for a transaction. */
  readonly isTransaction: boolean;
}

/**
 * `fence()` on Kysely: pass the transaction of `db.transaction().execute(...)`, and the dialect of its database
 * (`postgres`, the default, or `mysql` for MySQL and MariaDB). Loads `kysely` (an optional peer) when first called.
 *
 * @example
 * ```ts
 * await db.transaction().execute(async (trx) => {
 *   await fence(kyselyExecutor(trx), 'invoices', lease);
 *   await trx.updateTable('invoices').set({ status: 'charged' }).where('status', '=', 'due').execute();
 * });
 * ```
 */
export function kyselyExecutor(trx: KyselyQueryable, dialect: FenceDialect = 'postgres'): FenceExecutor {
  const what = 'kyselyExecutor(trx)';
  if (!trx || typeof trx.executeQuery !== 'function') throw notATransaction(what, 'must be a Kysely transaction (the trx of db.transaction().execute())');
  if (trx.isTransaction !== true) throw notATransaction(what, 'got a Kysely instance outside a transaction: pass the trx that db.transaction().execute() gives your callback');
  const { CompiledQuery } = peer<{ CompiledQuery: { raw(sql: string, parameters: unknown[]): unknown } }>('kysely', what);
  return { dialect, query: async (sql, params) => rowsOf(await trx.executeQuery(CompiledQuery.raw(sql, [...params]))) };
}
