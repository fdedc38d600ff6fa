import type { Command } from 'commander';
import { PostgresBackend } from '../backends/postgres/postgres-backend';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { declareNewStore } from '../store/new-store';
import type { NewStoreReport } from '../store/new-store-report';
import { cannotReach, parseCliConnection, reachedStore, type RawCliConnectionOptions, type StoresNamed } from './cli-connection';
import type { ReachedStore } from './cli-reached-store';
import { asUsageError, CliUsageError, NothingDeclaredError } from './cli-errors';
import { SchemaTooNewError } from '../backends/postgres/postgres-schema';

/** What `store init` printed, for people. */
function initText(report: NewStoreReport): string {
  const lifted = report.waitsLifted.map((w) => `  ${w.semaphore} (${w.map})`);
  return [
    report.alreadyNew
      ? `${report.store} was already declared new: first grants need no recovery wait.`
      : `Declared ${report.store} new: first grants need no recovery wait.`,
    ...(lifted.length > 0 ? [`Recovery waits lifted (these semaphores can be granted now):\n${lifted.join('\n')}`] : []),
  ].join('\n');
}

/**
 * Adds `store init` (declare a store that never held the library's state new, on any backend, through
 * `declareNewStore`) and `store migrate` (PostgreSQL's schema, ahead of a deploy). Both work on the backend as the
 * other commands choose it (`--backend`, or the one the options and environment name), without connecting its stores
 * first: opening them would make a new store look used.
 */
export function addStoreCommands(program: Command, named: () => StoresNamed, print: (json: unknown, text: string) => void): void {
  const store = program.command('store').description('the store as a whole: declare a new one, migrate its schema');
  /** The backend the options name, checked before anything is contacted; a failed connection said as the CLI says it. */
  const run = async <T>(work: (reached: ReachedStore) => Promise<T>): Promise<T> => {
    let reached: ReachedStore;
    let connection: ReturnType<typeof parseCliConnection>;
    try {
      connection = parseCliConnection(program.opts<RawCliConnectionOptions>(), named());
      reached = await reachedStore(connection);
    } catch (error) {
      throw asUsageError(error);
    }
    try {
      return await work(reached);
    } catch (error) {
      throw error instanceof StoreUnavailableError || error instanceof SchemaTooNewError ? cannotReach(reached, connection, error) : error;
    }
  };
  store
    .command('init')
    .description(
      "declare a store that never held the library's state new, so its first grants need no recovery wait (a new store looks " +
        'exactly like one that lost its data, and is otherwise waited out for one permit duration): a Hazelcast cluster (refused, ' +
        'writing nothing, when it shows an earlier life: permits granted, or a semaphore rebuilt by a node that knew it before; ' +
        'it also lifts the waits nodes set meanwhile), a PostgreSQL schema (created now; refused when it existed), a Redis map ' +
        'prefix (refused once a node used it). Refused means exit 1. Run it once, before or just after the first node starts',
    )
    .action(() =>
      run(async ({ backend }) => {
        const report = await declareNewStore(backend);
        if (!report.declared) {
          throw new NothingDeclaredError(`${report.store} is in use already (or was found lost): nothing declared; `
            + 'semaphores rebuilt after a loss wait out one permit duration (exit 1: run it once, before the first node starts)');
        }
        print(report, initText(report));
      }),
    );
  store
    .command('migrate')
    .description(
      "PostgreSQL: create or upgrade the library's tables in their schema (what every node does at start, under an advisory " +
        'lock), for teams that migrate ahead of a deploy; refused, changing nothing, when the schema is newer than this version ' +
        'knows. Needs --pg-url (or GATEKEEPER_PG_URL); the schema is --pg-schema (default gatekeeper)',
    )
    .action(() =>
      run(async ({ backend }) => {
        if (!(backend instanceof PostgresBackend)) throw new CliUsageError(`store migrate: the ${backend.kind} backend has no schema to migrate (--backend postgres)`, 'backend');
        const result = await backend.migrate();
        const { schema, from, to } = result;
        print(result, from === to
          ? `Schema "${schema}" is at version ${to}, this version's: nothing to do.`
          : `Schema "${schema}" migrated from version ${from} to ${to}.`);
      }),
    );
}
