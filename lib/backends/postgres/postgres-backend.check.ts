import { nameProblem } from '../../core/names';
import { invalidOption } from '../../core/errors/input.errors';
import type { PostgresBackendOptions } from './postgres-backend.options';

/** A schema name the backend accepts: it ends up in SQL identifiers and the notification channel. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,40}$/;

/**
 * The PostgreSQL backend's options checked before anything connects, each problem named by its option: one of
 * `pool`, `connectionString` or `poolConfig`; a schema of lower-case letters, digits and `_`; a map prefix that is a
 * valid name. Returns the schema and the prefix to use.
 */
export function checkPostgresOptions(options: PostgresBackendOptions): { schema: string; mapPrefix: string } {
  if (!options.pool && options.connectionString === undefined && options.poolConfig === undefined) {
    throw invalidOption('postgres', 'give pool, connectionString or poolConfig');
  }
  const schema = options.schema ?? 'gatekeeper';
  const mapPrefix = options.mapPrefix ?? 'gatekeeper';
  if (!SCHEMA_NAME.test(schema)) throw invalidOption('postgres.schema', `must be lower-case letters, digits and _ (at most 41), got ${JSON.stringify(schema)}`);
  const prefixProblem = nameProblem(mapPrefix);
  if (prefixProblem !== undefined) throw invalidOption('postgres.mapPrefix', prefixProblem);
  return { schema, mapPrefix };
}
