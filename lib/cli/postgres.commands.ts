import type { Command } from 'commander';
import { PostgresBackend } from '../backends/postgres/postgres-backend';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { parseCliConnection, type RawCliConnectionOptions } from './cli-connection';
import { redactedUrl } from '../core/redacted-url';
import { asUsageError } from './cli-errors';

/**
 * Adds `postgres migrate`: brings the library's PostgreSQL schema to this version's, for teams that migrate ahead of
 * a deploy (nodes also migrate at start, under the same advisory lock).
 */
export function addPostgresCommands(program: Command, print: (json: unknown, text: string) => void): void {
  const postgres = program.command('postgres').description('the PostgreSQL backend: its schema');
  postgres
    .command('migrate')
    .description(
      "create or upgrade the library's tables in their schema (what every node does at start, under an advisory lock), for " +
        'teams that migrate ahead of a deploy; refused, changing nothing, when the schema is newer than this version knows. ' +
        'Needs --pg-url (or GATEKEEPER_PG_URL); the schema is --pg-schema (default gatekeeper)',
    )
    .action(async () => {
      let url: string;
      let backend: PostgresBackend;
      const { connectTimeout, ...raw } = program.opts<RawCliConnectionOptions>();
      try {
        const connection = parseCliConnection({ ...raw, connectTimeout, backend: 'postgres' });
        url = connection.postgresUrl!;
        backend = new PostgresBackend({
          connectionString: url,
          schema: connection.postgresSchema,
          poolConfig: { connectionTimeoutMillis: connection.connectTimeout, application_name: 'nestjs-gatekeeper cli' },
        });
      } catch (error) {
        throw asUsageError(error);
      }
      let result: Awaited<ReturnType<PostgresBackend['migrate']>>;
      try {
        result = await backend.migrate();
      } catch (error) {
        if (error instanceof StoreUnavailableError) {
          throw new StoreUnavailableError(`cannot reach PostgreSQL at ${redactedUrl(url)}: ${error.message}`, { cause: error });
        }
        throw error;
      }
      const { schema, from, to } = result;
      print(result, from === to
        ? `Schema "${schema}" is at version ${to}, this version's: nothing to do.`
        : `Schema "${schema}" migrated from version ${from} to ${to}.`);
    });
}
