import { ENV } from '../../core/env-vars';
import { postgresUrlProblem } from './postgres-backend.check';
import type { ServerBackendKind } from '../../store/server-backend';
import { PostgresBackend } from './postgres-backend';
import type { PostgresBackendOptions } from './postgres-backend.options';
import { describeLostData } from './postgres-incarnation';

/**
 * The module's PostgreSQL backend, made from its `postgres` option (the connection string from `GATEKEEPER_PG_URL`
 * when it names no connection), a loss of data reported as an error unless the option says where it goes.
 */
export const POSTGRES_BACKEND: ServerBackendKind<PostgresBackendOptions> = {
  option: 'postgres',
  urlVariable: ENV.pgUrl,
  connectionFields: ['connectionString', 'poolConfig', 'pool'],
  urlProblem: postgresUrlProblem,
  withUrl: (options, connectionString) => ({ ...options, connectionString }),
  create: (options, reports) => new PostgresBackend({ onLostData: (report) => reports.error(describeLostData(report)), ...options }),
};
