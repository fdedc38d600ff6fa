import { createRequire } from 'node:module';
import { InvalidOptionsError } from '../../core/errors/invalid-options.error';
import type { RedisBackendOptions, RedisClient } from './redis-backend.options';

/**
 * The client a backend uses: the application's own (`options.client`), or one of the backend's own that fails a call
 * made while it is disconnected at once (`enableOfflineQueue: false`: a queued write would run whenever the
 * connection came back, long after its caller gave up) and connects only when the backend opens.
 */
export function newClient(options: RedisBackendOptions, defaultTimeoutMs: number): { client: RedisClient; own: boolean } {
  if (options.client) return { client: options.client, own: false };
  const Redis = loadIoredis();
  const timeout = options.callTimeoutMs ?? defaultTimeoutMs;
  const settings = { enableOfflineQueue: false, lazyConnect: true, connectTimeout: timeout, maxRetriesPerRequest: 0, ...options.connection };
  const client = (options.url !== undefined ? new Redis(options.url, settings) : new Redis(settings)) as unknown as RedisClient;
  // A connection that fails must not crash the process: ioredis reconnects, and calls fail meanwhile.
  client.on('error', () => undefined);
  return { client, own: true };
}

/** `ioredis`, an optional peer: a clear error when it is not installed. */
function loadIoredis(): new (...args: unknown[]) => unknown {
  try {
    const loaded = createRequire(__filename)('ioredis') as { default?: unknown };
    return (loaded.default ?? loaded) as new (...args: unknown[]) => unknown;
  } catch (error) {
    throw new InvalidOptionsError('redis', `the Redis backend needs the ioredis package (npm install ioredis): ${(error as Error).message}`);
  }
}
