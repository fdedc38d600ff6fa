import { createRequire } from 'node:module';
import type { RedisBackendOptions, RedisClient } from './redis-backend.options';
import { invalidOption } from '../../core/errors/input.errors';

/**
 * What every connection of a backend is held to, whatever the options: a command is sent once, or fails. A call made
 * while disconnected fails at once (no offline queue: a queued write would run whenever the connection came back,
 * long after its caller gave up), and a command in flight when the connection drops fails with it (no retry, no
 * resend on reconnect: the second run of a compare-and-set would answer "not written" for the first run's write).
 */
const SENT_ONCE = { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false } as const;

/**
 * The client a backend sends its calls on, always its own: made from `options.url` or `options.connection`, or like
 * the application's client (`options.client`, duplicated: the application's client is never used nor closed), held
 * to {@link SENT_ONCE}, and connected only when the backend opens.
 */
export function newClient(options: RedisBackendOptions, defaultTimeoutMs: number): RedisClient {
  const timeout = options.callTimeoutMs ?? defaultTimeoutMs;
  let client: RedisClient;
  if (options.client) {
    const model = options.client as RedisClient & { isCluster?: boolean; options?: { redisOptions?: Record<string, unknown> } };
    client = model.isCluster
      ? model.duplicate([], { lazyConnect: true, enableOfflineQueue: false, redisOptions: { ...model.options?.redisOptions, ...SENT_ONCE } })
      : model.duplicate({ lazyConnect: true, ...SENT_ONCE });
  } else {
    const Redis = loadIoredis();
    const settings = { lazyConnect: true, connectTimeout: timeout, ...options.connection, ...SENT_ONCE };
    client = (options.url !== undefined ? new Redis(options.url, settings) : new Redis(settings)) as unknown as RedisClient;
  }
  // A connection that fails must not crash the process: ioredis reconnects, and calls fail meanwhile.
  client.on('error', () => undefined);
  return client;
}

/** `ioredis`, an optional peer: a clear error when it is not installed. */
function loadIoredis(): new (...args: unknown[]) => unknown {
  try {
    const loaded = createRequire(__filename)('ioredis') as { default?: unknown };
    return (loaded.default ?? loaded) as new (...args: unknown[]) => unknown;
  } catch (error) {
    throw invalidOption('redis', `the Redis backend needs the ioredis package (npm install ioredis): ${(error as Error).message}`);
  }
}
