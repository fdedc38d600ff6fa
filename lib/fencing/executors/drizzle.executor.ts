import type { FenceDialect, FenceExecutor } from '../fence-executor';
import { notATransaction, rowsOf } from './executor-input';
import { peer, templateOf } from './peer';

/** What `drizzleExecutor` needs of Drizzle: a transaction (`tx`). */
export interface DrizzleQueryable {
  /** Runs a query in the transaction. */
  execute(query: never): PromiseLike<unknown>;
  /** A transaction's: a database has none. */
  rollback(): unknown;
}

/**
 * `fence()` on Drizzle: pass the transaction of `db.transaction(...)` (a nested `tx.transaction(...)` is a
 * savepoint), and the dialect of its database (`postgres`, the default, or `mysql` for MySQL and MariaDB). Loads
 * `drizzle-orm` (an optional peer) when first called.
 *
 * @example
 * ```ts
 * await db.transaction(async (tx) => {
 *   await fence(drizzleExecutor(tx), 'invoices', lease);
 *   await tx.update(invoices).set({ status: 'charged' }).where(eq(invoices.status, 'due'));
 * });
 * ```
 */
export function drizzleExecutor(tx: DrizzleQueryable, dialect: FenceDialect = 'postgres'): FenceExecutor {
  const what = 'drizzleExecutor(tx)';
  if (!tx || typeof tx.execute !== 'function') throw notATransaction(what, 'must be a Drizzle transaction (the tx of db.transaction())');
  if (typeof tx.rollback !== 'function') throw notATransaction(what, 'got a Drizzle database outside a transaction: pass the tx that db.transaction() gives your callback');
  const { sql: tag } = peer<{ sql: (strings: TemplateStringsArray, ...values: unknown[]) => never }>('drizzle-orm', what);
  return {
    dialect,
    query: async (sql, params) => {
      const { strings, values } = templateOf(sql, params);
      return rowsOf(await tx.execute(tag(Object.assign(strings, { raw: strings }) as unknown as TemplateStringsArray, ...values)));
    },
  };
}
