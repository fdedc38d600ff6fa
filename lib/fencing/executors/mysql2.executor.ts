import type { FenceExecutor } from '../fence-executor';
import { notATransaction, rowsOf } from './executor-input';

/** What `mysql2Executor` needs of mysql2: a promise connection's `query(sql, values)`. */
export interface Mysql2Queryable {
  /** Runs SQL with `?` values on this connection. */
  query(sql: string, values?: unknown[]): Promise<unknown>;
}

/**
 * `fence()` on mysql2 (MySQL, MariaDB): pass the promise connection your transaction runs on (from
 * `pool.getConnection()`, after `beginTransaction()`), not the pool.
 *
 * @example
 * ```ts
 * const connection = await pool.getConnection();
 * try {
 *   await connection.beginTransaction();
 *   await fence(mysql2Executor(connection), 'invoices', lease);
 *   await connection.query('UPDATE invoices SET status = ? WHERE status = ?', ['charged', 'due']);
 *   await connection.commit();
 * } catch (error) {
 *   await connection.rollback();
 *   throw error;
 * } finally {
 *   connection.release();
 * }
 * ```
 */
export function mysql2Executor(connection: Mysql2Queryable): FenceExecutor {
  if (!connection || typeof connection.query !== 'function') throw notATransaction('mysql2Executor(connection)', 'must be a mysql2 promise connection that runs your transaction');
  if ('getConnection' in connection && typeof connection.getConnection === 'function') throw notATransaction('mysql2Executor(connection)', 'got a Pool: its query() may run on another connection than your transaction; pass the connection from pool.getConnection() you began it on');
  return { dialect: 'mysql', query: async (sql, params) => rowsOf(await connection.query(sql, [...params])) };
}
