import type { SqlTransaction } from '../store/sql-transaction';

/** The SQL a fence speaks: PostgreSQL's, or MySQL's and MariaDB's. */
export type FenceDialect = 'postgres' | 'mysql';

/**
 * How `fence()` runs its statements in your transaction: one small adapter per tool (`pgExecutor`,
 * `typeormExecutor`, `prismaExecutor`, ...), or your own for another tool. Its `query` must not start, commit or end
 * a transaction. The same executors write tasks, schedules and run requests in your transaction (a `SqlTransaction`).
 *
 * @example An executor of your own, for a client with a `query(text, values)` that answers `{ rows }`:
 * ```ts
 * const executor: FenceExecutor = { dialect: 'postgres', query: async (sql, params) => (await client.query(sql, [...params])).rows };
 * ```
 */
export interface FenceExecutor extends SqlTransaction {
  /** The database's SQL: `postgres` (placeholders `$1`, `$2`, ...) or `mysql` (placeholders `?`). */
  readonly dialect: FenceDialect;
}
