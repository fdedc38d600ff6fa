import { rootCause, type ConnectFailure } from '../../store/connect-failure';

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
