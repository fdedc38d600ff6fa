import type { RecordMap } from '../../../store/record-map';
import type { SqlTransaction, TransactionRecords } from '../../../store/sql-transaction';
import type { StoreBackend } from '../../../store/store-backend';

/**
 * The tasks' table as the PostgreSQL task store uses it (see {@link PostgresTaskTables.taskTable}).
 * @internal
 */
export interface PostgresTaskTable {
  /** The record map of the tasks' rows (`map` = {@link PostgresTaskTable.stored}). */
  readonly map: RecordMap;
  /** The rows' reads and compare-and-sets in the application's transaction (see `StoreBackend.recordsIn`). */
  inTransaction(transaction: SqlTransaction): TransactionRecords;
  /** The rows' `map` (`<prefix>.tasks`). */
  readonly stored: string;
  /** The quoted table (`"gatekeeper".tasks`). */
  readonly table: string;
  /** The quoted schema (`"gatekeeper"`), whose functions the store calls. */
  readonly schema: string;
  /** Runs one of the store's queries, with the backend's deadline and failure mapping; its rows. */
  select<R extends object>(sql: string, values: unknown[], what: string, timeoutMs?: number): Promise<R[]>;
}

/**
 * What the PostgreSQL task store needs of its backend: the contract, and the tasks' table (the PostgreSQL backend).
 * @internal
 */
export interface PostgresTaskTables extends StoreBackend {
  /** The table `name`'s rows as the task store reads and writes them; throws while the backend is not open. */
  taskTable(name: string): PostgresTaskTable;
}
