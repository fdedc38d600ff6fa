/** The SQL a fence speaks: PostgreSQL's, or MySQL's and MariaDB's. */
export type FenceDialect = 'postgres' | 'mysql';

/**
 * How `fence()` runs its statements in your transaction: one small adapter per tool (`pgExecutor`,
 * `typeormExecutor`, `prismaExecutor`, ...), or your own for another tool.
 *
 * @example An executor of your own, for a client with a `query(text, values)` that answers `{ rows }`:
 * ```ts
 * const executor: FenceExecutor = { dialect: 'postgres', query: async (sql, params) => (await client.query(sql, [...params])).rows };
 * ```
 */
export interface FenceExecutor {
  /** The database's SQL: `postgres` (placeholders `$1`, `$2`, ...) or `mysql` (placeholders `?`). */
  readonly dialect: FenceDialect;
  /**
   * Runs `sql` with its positional parameters on the transaction's connection, and answers the rows it returned
   * (none for a statement that returns none). Must not start, commit or end a transaction.
   */
  query(sql: string, params: readonly unknown[]): Promise<ReadonlyArray<Record<string, unknown>>>;
}
