import { PostgresBackend } from '../backends/postgres/postgres-backend';
import { PermitRecordStore } from '../permits/permit-record.store';
import { PostgresTaskStore } from '../backends/postgres/tasks/postgres-task.store';
import type { CliConnectionOptions, ReachedStore } from './cli-reached-store';
import { redactedUrl } from '../core/redacted-url';

/** The CLI's stores on PostgreSQL. */
export function postgresStores(options: CliConnectionOptions): ReachedStore {
  const backend = new PostgresBackend({
    connectionString: options.postgresUrl,
    ...(options.postgresSchema !== undefined && { schema: options.postgresSchema }),
    mapPrefix: options.mapPrefix,
    callTimeoutMs: options.connectTimeout,
    poolConfig: { connectionTimeoutMillis: options.connectTimeout, application_name: 'nestjs-gatekeeper cli' },
  });
  return {
    store: new PermitRecordStore(backend, options.connectTimeout),
    backend,
    tasks: () => new PostgresTaskStore(backend, options.connectTimeout),
    unreachable: `cannot reach PostgreSQL at ${redactedUrl(options.postgresUrl!)}`,
    hint: 'is the server running, and the connection string right? Point the CLI at yours with --pg-url (or GATEKEEPER_PG_URL)',
  };
}
