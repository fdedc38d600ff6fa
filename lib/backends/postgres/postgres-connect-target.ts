import { redactedUrl } from '../../core/redacted-url';
import { hostAddress, rootCause, type ConnectFailure, type ConnectTarget } from '../../store/connect-failure';
import type { PostgresBackendOptions } from './postgres-backend.options';

/** SQLSTATEs of a login the server refused (`28P01` password, `28000` a role it does not know or may not log in). */
const REFUSED_LOGIN = new Set(['28P01', '28000']);
/** `3D000`: the database named does not exist. */
const MISSING_DATABASE = '3D000';

/** What a failed connection to PostgreSQL was, told from the driver's error: refused, missing, or not reached (yet). */
export function postgresConnectFailure(error: unknown): ConnectFailure {
  const { code, message } = rootCause(error);
  if (code !== undefined && REFUSED_LOGIN.has(code)) return { kind: 'refused-login', detail: message };
  if (code === MISSING_DATABASE) return { kind: 'missing-database', detail: message };
  return { kind: 'unreachable', detail: message };
}

/** The PostgreSQL server `options` name, as start-up and its errors name it (the module's `postgres` option). */
export function postgresConnectTarget(options: PostgresBackendOptions): ConnectTarget {
  const config = options.poolConfig;
  const [address, source] = options.pool ? ['(the pool given)', 'postgres.pool']
    : options.connectionString !== undefined ? [redactedUrl(options.connectionString), 'postgres.connectionString']
      : [hostAddress(config?.host, config?.port, config?.database), 'postgres.poolConfig'];
  return { name: 'PostgreSQL', address, source, failure: postgresConnectFailure };
}
