import type { FenceExecutor } from '../fence-executor';
import { dialectNamed, notATransaction, questionMarks, rowsOf } from './executor-input';

/** What `knexExecutor` needs of Knex: a transaction (`trx`). */
export interface KnexQueryable {
  /** Runs SQL with `?` bindings in the transaction. */
  raw(sql: string, bindings: unknown[]): PromiseLike<unknown>;
  /** True for a transaction. */
  readonly isTransaction?: boolean;
  /** Its client, which names the dialect. */
  readonly client: { readonly config?: { readonly client?: unknown }; readonly dialect?: string };
}

/**
 * `fence()` on Knex (PostgreSQL, MySQL, MariaDB): pass the transaction (`trx`) of `knex.transaction(...)`. A nested
 * `trx.transaction(...)` is a savepoint, as Knex does them.
 *
 * @example
 * ```ts
 * await knex.transaction(async (trx) => {
 *   await fence(knexExecutor(trx), 'invoices', lease);
 *   await trx('invoices').where({ status: 'due' }).update({ status: 'charged' });
 * });
 * ```
 */
export function knexExecutor(trx: KnexQueryable): FenceExecutor {
  const what = 'knexExecutor(trx)';
  if (!trx || typeof trx.raw !== 'function') throw notATransaction(what, 'must be a Knex transaction (the trx of knex.transaction())');
  if (trx.isTransaction !== true) throw notATransaction(what, 'got a Knex instance outside a transaction: pass the trx that knex.transaction() gives your callback');
  const named = trx.client?.dialect ?? trx.client?.config?.client;
  const dialect = dialectNamed(typeof named === 'function' ? (named as { name?: string }).name : named);
  if (!dialect) throw notATransaction(what, `fences PostgreSQL, MySQL and MariaDB, got a Knex client ${JSON.stringify(named)}`);
  // Knex binds `?` in every dialect.
  return { dialect, query: async (sql, params) => rowsOf(await trx.raw(questionMarks(sql), [...params])) };
}
