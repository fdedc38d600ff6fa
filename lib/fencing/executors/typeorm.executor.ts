import type { FenceExecutor } from '../fence-executor';
import { dialectNamed, notATransaction, rowsOf } from './executor-input';

/** What `typeormExecutor` needs of TypeORM: an `EntityManager` of a transaction, or a `QueryRunner` in one. */
export interface TypeormQueryable {
  /** Runs SQL in the transaction. */
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
  /** Its data source, which names the database type. */
  readonly connection: { readonly options: { readonly type: string } };
  /** An EntityManager's: set for the manager of `dataSource.transaction(...)`. */
  readonly queryRunner?: { readonly isTransactionActive: boolean };
  /** A QueryRunner's. */
  readonly isTransactionActive?: boolean;
}

/**
 * `fence()` on TypeORM (PostgreSQL, MySQL, MariaDB): pass the `EntityManager` of `dataSource.transaction(...)` (or of
 * `@Transactional` code), or a `QueryRunner` after `startTransaction()`. Nested transactions (savepoints) work as
 * TypeORM does them: a refusal inside one rolls back to its savepoint when the error leaves it.
 *
 * @example
 * ```ts
 * await dataSource.transaction(async (manager) => {
 *   await fence(typeormExecutor(manager), 'invoices', lease);
 *   await manager.update(Invoice, { status: 'due' }, { status: 'charged' });
 * });
 * ```
 */
export function typeormExecutor(managerOrRunner: TypeormQueryable): FenceExecutor {
  const what = 'typeormExecutor(manager)';
  if (!managerOrRunner || typeof managerOrRunner.query !== 'function') throw notATransaction(what, 'must be the EntityManager of a transaction or a QueryRunner');
  const dialect = dialectNamed(managerOrRunner.connection?.options?.type);
  if (!dialect) throw notATransaction(what, `fences PostgreSQL, MySQL and MariaDB, got a data source of type ${JSON.stringify(managerOrRunner.connection?.options?.type)}`);
  const inTransaction = typeof managerOrRunner.isTransactionActive === 'boolean' ? managerOrRunner.isTransactionActive : managerOrRunner.queryRunner?.isTransactionActive === true;
  if (!inTransaction) {
    throw notATransaction(what, 'is in no transaction: pass the EntityManager that dataSource.transaction() gives your callback (dataSource.manager runs each query on its own), or a QueryRunner after startTransaction()');
  }
  return { dialect, query: async (sql, params) => rowsOf(await managerOrRunner.query(sql, [...params])) };
}
