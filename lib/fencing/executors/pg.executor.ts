import type { FenceExecutor } from '../fence-executor';
import { notATransaction, rowsOf } from './executor-input';

/** What `pgExecutor` needs of node-postgres: a client's `query(text, values)` (a `PoolClient`, a `Client`). */
export interface PgQueryable {
  /** Runs SQL with `$1` values on this client's connection. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * `fence()` on node-postgres (`pg`): pass the client your transaction runs on, the one you sent `BEGIN` on (from
 * `pool.connect()`), not the pool, whose `query` may run on another connection. It listens for the client's `'error'`
 * event, which node-postgres emits on a checked-out client whose session the server ended (`maxIdle`): the error then
 * fails the transaction's next statement instead of ending the process.
 *
 * @example
 * ```ts
 * const client = await pool.connect();
 * try {
 *   await client.query('BEGIN');
 *   await fence(pgExecutor(client), 'invoices', lease);
 *   await client.query('UPDATE invoices SET status = $1 WHERE status = $2', ['charged', 'due']);
 *   await client.query('COMMIT');
 * } catch (error) {
 *   await client.query('ROLLBACK');
 *   throw error;
 * } finally {
 *   client.release();
 * }
 * ```
 */
export function pgExecutor(client: PgQueryable): FenceExecutor {
  if (!client || typeof client.query !== 'function') throw notATransaction('pgExecutor(client)', 'must be a pg client (from pool.connect()) that runs your transaction');
  if ('totalCount' in client && 'idleCount' in client) throw notATransaction('pgExecutor(client)', 'got a Pool: its query() may run on another connection than your transaction; pass the client from pool.connect() you sent BEGIN on');
  listenForErrors(client);
  return { dialect: 'postgres', query: async (sql, params) => rowsOf(await client.query(sql, [...params])) };
}

/** The clients `pgExecutor` listens on, each once. */
const LISTENED = new WeakSet<object>();

function listenForErrors(client: PgQueryable): void {
  const emitter = client as PgQueryable & { on?: (event: 'error', listener: () => void) => unknown };
  if (typeof emitter.on !== 'function' || LISTENED.has(client)) return;
  LISTENED.add(client);
  // node-postgres marks the client broken before emitting: its next query rejects with the error.
  emitter.on('error', () => undefined);
}
