import type { FenceExecutor } from '../fence-executor';
import { preparedName } from '../prepared-statements';
import { notATransaction, rowsOf } from './executor-input';

/** What `pgExecutor` needs of node-postgres: a client's `query` (a `PoolClient`, a `Client`). */
export interface PgQueryable {
  /**
   * Runs SQL with `$1` values on this client's connection: `text` and `values`, or (node-postgres's query config) a
   * named statement, which the connection parses once and then runs by its name.
   */
  query(text: string | { readonly name: string; readonly text: string; readonly values: unknown[] }, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * `fence()` on node-postgres (`pg`): pass the client your transaction runs on, the one you sent `BEGIN` on (from
 * `pool.connect()`), not the pool, whose `query` may run on another connection. It listens for the client's `'error'`
 * event, which node-postgres emits on a checked-out client whose session the server ended (`maxIdle`): the error then
 * fails the transaction's next statement instead of ending the process.
 *
 * The fence's own statements run as named prepared statements of the connection (`gatekeeper_fence_1`, ...), parsed
 * and planned once per connection: about a fifth of what a fence costs. Behind a pooler that does not keep prepared
 * statements per client (PgBouncer in transaction mode before 1.21, or with `max_prepared_statements = 0`), pass
 * `{ prepare: false }`.
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
export function pgExecutor(client: PgQueryable, options: { readonly prepare?: boolean } = {}): FenceExecutor {
  if (!client || typeof client.query !== 'function') throw notATransaction('pgExecutor(client)', 'must be a pg client (from pool.connect()) that runs your transaction');
  if ('totalCount' in client && 'idleCount' in client) throw notATransaction('pgExecutor(client)', 'got a Pool: its query() may run on another connection than your transaction; pass the client from pool.connect() you sent BEGIN on');
  if (options.prepare !== undefined && typeof options.prepare !== 'boolean') throw notATransaction('pgExecutor(client, options).prepare', `must be true or false, got ${JSON.stringify(options.prepare)}`);
  listenForErrors(client);
  const prepare = options.prepare !== false;
  return {
    dialect: 'postgres',
    query: async (sql, params) => {
      const name = prepare ? preparedName(sql) : undefined;
      if (name === undefined) return rowsOf(await client.query(sql, [...params]));
      try {
        return rowsOf(await client.query({ name, text: sql, values: [...params] }));
      } catch (error) {
        throw lostPrepared(error, name) ?? error;
      }
    },
  };
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

/**
 * The error for a fence statement the server connection does not know although this client prepared it (SQLSTATE
 * 26000): a pooler between the client and the server (PgBouncer in transaction mode before 1.21, or with
 * `max_prepared_statements = 0`) handed the transaction a server connection that never saw it. Undefined for another error.
 */
function lostPrepared(error: unknown, name: string): Error | undefined {
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code !== '26000' || typeof e.message !== 'string' || !e.message.includes(name)) return undefined;
  const reason = `ran the fence's prepared statement "${name}" on a server connection that does not know it, so a pooler hands ` +
    `this client's transactions to other server connections (PgBouncer in transaction mode before 1.21, or with max_prepared_statements = 0): ` +
    `pass pgExecutor(client, { prepare: false }), or let the pooler keep prepared statements; this transaction failed and wrote nothing`;
  const refused = notATransaction('pgExecutor(client, options).prepare', reason);
  (refused as { cause?: unknown }).cause = error;
  return refused;
}
