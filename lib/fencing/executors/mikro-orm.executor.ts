import type { FenceExecutor } from '../fence-executor';
import { dialectNamed, notATransaction, questionMarks, rowsOf } from './executor-input';

/** What `mikroOrmExecutor` needs of MikroORM: a SQL `EntityManager` in a transaction. */
export interface MikroOrmQueryable {
  /** Runs SQL with `?` parameters in the manager's transaction. */
  execute(query: string, params?: unknown[], method?: 'all' | 'get' | 'run'): Promise<unknown>;
  /** Whether the manager is in a transaction. */
  isInTransaction(): boolean;
  /** Its platform, which names the dialect. */
  getPlatform(): object;
}

/**
 * `fence()` on MikroORM (`@mikro-orm/postgresql`, `@mikro-orm/mysql`, `@mikro-orm/mariadb`): pass the
 * `EntityManager` of `em.transactional(...)` (or of `@Transactional()` code).
 *
 * @example
 * ```ts
 * await em.transactional(async (tx) => {
 *   await fence(mikroOrmExecutor(tx), 'invoices', lease);
 *   await tx.nativeUpdate(Invoice, { status: 'due' }, { status: 'charged' });
 * });
 * ```
 */
export function mikroOrmExecutor(em: MikroOrmQueryable): FenceExecutor {
  const what = 'mikroOrmExecutor(em)';
  if (!em || typeof em.execute !== 'function' || typeof em.isInTransaction !== 'function') throw notATransaction(what, 'must be a MikroORM SQL EntityManager in a transaction');
  if (!em.isInTransaction()) throw notATransaction(what, 'is in no transaction: pass the EntityManager that em.transactional() gives your callback');
  const platform = em.getPlatform()?.constructor?.name;
  const dialect = dialectNamed(platform);
  if (!dialect) throw notATransaction(what, `fences PostgreSQL, MySQL and MariaDB, got the platform ${JSON.stringify(platform)}`);
  // MikroORM binds `?` in every dialect.
  return { dialect, query: async (sql, params) => rowsOf(await em.execute(questionMarks(sql), [...params], 'all')) };
}
