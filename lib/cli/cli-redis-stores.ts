import { RedisBackend } from '../backends/redis/redis-backend';
import { PermitRecordStore } from '../permits/permit-record.store';
import { RedisTaskStore } from '../backends/redis/tasks/redis-task.store';
import { redactedUrl } from '../core/redacted-url';
import type { CliConnectionOptions, ReachedStore } from './cli-reached-store';

/** The CLI's stores on Redis. */
export function redisStores(options: CliConnectionOptions): ReachedStore {
  const backend = new RedisBackend({
    url: options.redisUrl,
    mapPrefix: options.mapPrefix,
    callTimeoutMs: options.connectTimeout,
    connection: { connectTimeout: options.connectTimeout, connectionName: 'nestjs-gatekeeper cli' },
  });
  return {
    store: new PermitRecordStore(backend, options.connectTimeout),
    backend,
    tasks: () => new RedisTaskStore(backend, options.connectTimeout),
    unreachable: `cannot reach Redis at ${redactedUrl(options.redisUrl!)}`,
    hint: 'is the server running, and the URL right? Point the CLI at yours with --redis-url (or GATEKEEPER_REDIS_URL)',
  };
}
