import { nameProblem } from '../../core/names';
import { invalidOption } from '../../core/errors/input.errors';
import { redactedUrl } from '../../core/redacted-url';
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
  const urlIssue = options.connectionString === undefined ? undefined : postgresUrlProblem(options.connectionString);
  if (urlIssue !== undefined) throw invalidOption('postgres.connectionString', urlIssue);
  const schema = options.schema ?? 'gatekeeper';
  const mapPrefix = options.mapPrefix ?? 'gatekeeper';
  if (!SCHEMA_NAME.test(schema)) throw invalidOption('postgres.schema', `must be lower-case letters, digits and _ (at most 41), got ${JSON.stringify(schema)}`);
  const prefixProblem = nameProblem(mapPrefix);
  if (prefixProblem !== undefined) throw invalidOption('postgres.mapPrefix', prefixProblem);
  return { schema, mapPrefix };
}

/**
 * Why `url` cannot be a PostgreSQL connection string, or `undefined`: a `postgres://` or `postgresql://` URL (or
 * `socket:`), or a socket folder (a path starting with `/`). Anything else, node-postgres reads as a database name on a
 * host called `base` (`postgress//user:pw@db/app` waits 30 s for it), so it is refused here, shown without its password.
 */
export function postgresUrlProblem(url: string): string | undefined {
  const text = url.trim();
  if (text.startsWith('/')) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  if ((scheme === 'postgres' || scheme === 'postgresql') && text.slice(scheme.length + 1).startsWith('//')) return undefined;
  if (scheme === 'socket') return undefined;
  return `must be a URL such as postgres://user:password@host:5432/database (or a socket folder starting with /), got ${JSON.stringify(redactedUrl(text))}`;
}
