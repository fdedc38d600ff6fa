import type { StoredRecord } from './record-map';

/**
 * The application's own database transaction, as the library runs SQL in it: any executor of
 * `nestjs-gatekeeper/fencing` (`pgExecutor(client)`, `typeormExecutor(manager)`, ...).
 */
export interface SqlTransaction {
  /** The database's SQL: `postgres` or `mysql`. */
  readonly dialect: string;
  /**
   * Runs `sql` with positional parameters on the transaction's connection; the rows it returned (none for a
   * statement that returns none). It must not start, commit or end a transaction.
   */
  query(sql: string, params: readonly unknown[]): Promise<ReadonlyArray<Record<string, unknown>>>;
}

/**
 * One record map's reads and compare-and-sets inside the application's transaction (`StoreBackend.recordsIn`): as
 * the map's own, but on the transaction's connection, so they commit with the application's rows or not at all.
 */
export interface TransactionRecords {
  /** The live record of `key`, as the transaction sees it. */
  get(key: string): Promise<StoredRecord | undefined>;
  /** Creates the record if there is no live one (gone `ttlMs` after, when given); whether it did. */
  create(key: string, value: string, ttlMs?: number): Promise<boolean>;
  /** Replaces the record if it still holds exactly `expected`; whether it did. */
  replace(expected: StoredRecord, value: string): Promise<boolean>;
}

/**
 * Leaves the application's transaction unable to commit what it wrote, after a refusal the library throws: on
 * PostgreSQL a statement that fails (the transaction is failed, a `COMMIT` rolls it back); on MySQL and MariaDB,
 * which cannot fail a transaction, a `ROLLBACK` and a read-only transaction in its place (a `COMMIT` lands nothing, a
 * write fails). So a caller that catches the refusal and commits anyway commits nothing. Never throws.
 */
export async function failTransaction(transaction: SqlTransaction, message: string): Promise<void> {
  const statements: Array<[string, unknown[]]> = transaction.dialect === 'postgres'
    ? [['SELECT CAST($1::text AS integer)', [message]]]
    : [['ROLLBACK', []], ['START TRANSACTION READ ONLY', []]];
  for (const [sql, params] of statements) await transaction.query(sql, params).catch(() => undefined);
}
