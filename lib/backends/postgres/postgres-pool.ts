import { createRequire } from 'node:module';
import type * as Pg from 'pg';
import type { PostgresBackendOptions } from './postgres-backend.options';
import { invalidOption } from '../../core/errors/input.errors';

/**
 * The pool a backend uses: the application's own (`options.pool`), or one of the backend's own that has the server
 * cancel what the client gave up on. A statement past the call timeout (waiting on a row an operator's open
 * transaction holds, say) is cancelled there, so it cannot commit late and does not keep its connection; a connection
 * that cannot be made in that time (a frozen server accepts the socket and answers nothing) fails, rather than hold up
 * opening, watching and every call waiting for a connection. `poolConfig` may say otherwise.
 */
export function newPool(options: PostgresBackendOptions, defaultTimeoutMs: number): Pg.Pool {
  if (options.pool) return options.pool as Pg.Pool;
  const config: Pg.PoolConfig = {
    statement_timeout: options.callTimeoutMs ?? defaultTimeoutMs,
    connectionTimeoutMillis: options.callTimeoutMs ?? defaultTimeoutMs,
    ...(options.poolConfig as Pg.PoolConfig),
    ...(options.connectionString !== undefined && { connectionString: options.connectionString }),
  };
  const pool = new (loadPg().Pool)(config);
  // A pool's idle connection that fails (the server restarted) must not crash the process: the next call fails.
  pool.on('error', () => undefined);
  return pool;
}

/** `pg`, an optional peer: a clear error when it is not installed. */
function loadPg(): typeof Pg {
  try {
    return createRequire(__filename)('pg') as typeof Pg;
  } catch (error) {
    throw invalidOption('postgres', `the PostgreSQL backend needs the pg package (npm install pg): ${(error as Error).message}`);
  }
}
