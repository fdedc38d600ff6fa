import { redactedUrl } from '../../core/redacted-url';
import { hostAddress, rootCause, type ConnectFailure, type ConnectTarget } from '../../store/connect-failure';
import type { RedisBackendOptions } from './redis-backend.options';

/** What a failed connection to Redis was, told from the server's answer: a refused login, a database index it lacks, or none. */
export function redisConnectFailure(error: unknown): ConnectFailure {
  const { message } = rootCause(error);
  if (/\b(WRONGPASS|NOAUTH|NOPERM)\b/.test(message) || /invalid password|without any password configured/i.test(message)) return { kind: 'refused-login', detail: message };
  if (/DB index is out of range/i.test(message)) return { kind: 'missing-database', detail: message };
  return { kind: 'unreachable', detail: message };
}

/** The Redis server `options` name, as start-up and its errors name it (the module's `redis` option). */
export function redisConnectTarget(options: RedisBackendOptions): ConnectTarget {
  const connection = options.connection;
  const [address, source] = options.client ? ['(the client given)', 'redis.client']
    : options.url !== undefined ? [redactedUrl(options.url), 'redis.url']
      : [hostAddress(connection?.host, connection?.port, connection?.db), 'redis.connection'];
  return { name: 'Redis', address, source, failure: redisConnectFailure };
}
