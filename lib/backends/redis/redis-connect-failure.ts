import { rootCause, type ConnectFailure } from '../../store/connect-failure';

/** What a failed connection to Redis was, told from the server's answer: a refused login, a database index it lacks, or none. */
export function redisConnectFailure(error: unknown): ConnectFailure {
  const { message } = rootCause(error);
  if (/\b(WRONGPASS|NOAUTH|NOPERM)\b/.test(message) || /invalid password|without any password configured/i.test(message)) return { kind: 'refused-login', detail: message };
  if (/DB index is out of range/i.test(message)) return { kind: 'missing-database', detail: message };
  return { kind: 'unreachable', detail: message };
}
