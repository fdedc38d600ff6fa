import { PostgresBackend } from '../backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../backends/postgres/tasks/postgres-task.store';
import { RedisBackend } from '../backends/redis/redis-backend';
import { RedisTaskStore } from '../backends/redis/tasks/redis-task.store';
import { PermitRecordStore } from '../permits/permit-record.store';
import type { CliConnectionOptions, ReachedStore } from './cli-reached-store';

/** How the CLI names itself to the server (`application_name`, `CLIENT SETNAME`). */
const CLIENT_NAME = 'nestjs-gatekeeper cli';

/** What to check when the server was not reached, and where to point the CLI instead. */
const HINTS = {
  postgres: 'is the server running, and the connection string right? Point the CLI at yours with --pg-url (or GATEKEEPER_PG_URL)',
  redis: 'is the server running, and the URL right? Point the CLI at yours with --redis-url (or GATEKEEPER_REDIS_URL)',
} as const;

/**
 * The CLI's backend on PostgreSQL or Redis, as the options name it: every call and connection bounded by
 * `--connect-timeout`, and named as the CLI's to the server. Nothing connects until it is opened.
 */
export function cliServerBackend(options: CliConnectionOptions & { backend: 'postgres' | 'redis' }): PostgresBackend | RedisBackend {
  const { mapPrefix, connectTimeout } = options;
  return options.backend === 'postgres'
    ? new PostgresBackend({
      connectionString: options.postgresUrl,
      ...(options.postgresSchema !== undefined && { schema: options.postgresSchema }),
      mapPrefix,
      callTimeoutMs: connectTimeout,
      poolConfig: { connectionTimeoutMillis: connectTimeout, application_name: CLIENT_NAME },
    })
    : new RedisBackend({
      url: options.redisUrl,
      mapPrefix,
      callTimeoutMs: connectTimeout,
      connection: { connectTimeout, connectionName: CLIENT_NAME },
    });
}

/** The CLI's stores on PostgreSQL or Redis. */
export function serverStores(options: CliConnectionOptions & { backend: 'postgres' | 'redis' }): ReachedStore {
  const backend = cliServerBackend(options);
  const target = backend.describe();
  return {
    store: new PermitRecordStore(backend, options.connectTimeout),
    backend,
    tasks: () => (backend instanceof PostgresBackend ? new PostgresTaskStore(backend, options.connectTimeout) : new RedisTaskStore(backend, options.connectTimeout)),
    unreachable: `cannot reach ${target.name} at ${target.address}`,
    hint: HINTS[options.backend],
  };
}
