import type { Command } from 'commander';
import { PostgresBackend } from '../backends/postgres/postgres-backend';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { declareNewStore } from '../permits/new-store';
import type { NewStoreReport } from '../store/new-store-report';
import { cannotReach, parseCliConnection, reachedStore, type RawCliConnectionOptions, type StoresNamed } from './cli-connection';
import type { ReachedStore } from './cli-reached-store';
import { asUsageError, CliUsageError, MoveUnfinishedError, NothingDeclaredError } from './cli-errors';
import { SchemaTooNewError } from '../backends/postgres/postgres-schema';
import { parseDuration } from '../core/duration';
import { InvalidInputError } from '../core/errors/invalid-input.error';
import { movedCapabilities, moveStores, storeMoveText } from './store-move';
import { storeKey } from './cli-layout';

/** `store move`'s own options. */
interface MoveOptions {
  from: string;
  to: string;
  finish?: boolean;
  maxClockSkew: string;
  toPgUrl?: string;
  toPgSchema?: string;
  toRedisUrl?: string;
  toMembers?: string;
  toClusterName?: string;
  toMapPrefix?: string;
}

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
export function addStoreCommands(program: Command, named: () => StoresNamed, print: (json: unknown, text: string) => void, warn: (text: string) => void): void {
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
    .command('move <capabilities...>')
    .summary('move permits, schedules, history and tasks to another store under running nodes')
    .description(
      'move what the nodes keep (permits, schedules, history, tasks, or all) from one store to another under running nodes, ' +
        'never with two holders: first run it as it is (prepare: copies everything to the new store, where nothing is granted ' +
        'yet), then start the nodes with the new store and stop the old ones, then run it with --finish (marks the old store ' +
        'as left, so it grants nothing more, waits until its last permit lapsed, copies again, moves the tasks and lets the ' +
        'new store grant; exit 1 when a live node still works tasks on the old store). Both ' +
        'stores are named by their usual options (--pg-url, --redis-url, --members); a move between two stores of one kind ' +
        '(another Redis server, another schema or prefix) names the new one with the --to-* options',
    )
    .requiredOption('--from <backend>', 'the store the nodes use now: hazelcast, postgres or redis')
    .requiredOption('--to <backend>', 'the store they move to: hazelcast, postgres or redis')
    .option('--finish', 'the second step, once the nodes run on the new store')
    .option('--max-clock-skew <duration>', "the nodes' maxClockSkew (waited out beyond the last permit)", '500ms')
    .option('--to-pg-url <url>', 'the new store\'s PostgreSQL connection string, where it is not --pg-url')
    .option('--to-pg-schema <name>', 'the new store\'s schema, where it is not --pg-schema')
    .option('--to-redis-url <url>', 'the new store\'s Redis URL, where it is not --redis-url')
    .option('--to-members <addresses>', 'the new cluster\'s members, where they are not --members')
    .option('--to-cluster-name <name>', 'the new cluster\'s name, where it is not --cluster-name')
    .option('--to-map-prefix <prefix>', 'the new store\'s map prefix, where it is not --map-prefix')
    .action((capabilities: string[], o: MoveOptions) => moveCommand(capabilities, o));
  const moveCommand = async (given: string[], o: MoveOptions): Promise<void> => {
    let fromOptions: ReturnType<typeof parseCliConnection>;
    let toOptions: ReturnType<typeof parseCliConnection>;
    let capabilities: ReturnType<typeof movedCapabilities>;
    let skewMs: number;
    try {
      capabilities = movedCapabilities(given);
      fromOptions = parseCliConnection({ ...program.opts<RawCliConnectionOptions>(), backend: o.from });
      const toGiven: RawCliConnectionOptions = {
        ...program.opts<RawCliConnectionOptions>(), backend: o.to,
        ...(o.toPgUrl !== undefined && { pgUrl: o.toPgUrl }), ...(o.toPgSchema !== undefined && { pgSchema: o.toPgSchema }),
        ...(o.toRedisUrl !== undefined && { redisUrl: o.toRedisUrl }), ...(o.toMembers !== undefined && { members: o.toMembers }),
        ...(o.toClusterName !== undefined && { clusterName: o.toClusterName }), ...(o.toMapPrefix !== undefined && { mapPrefix: o.toMapPrefix }),
      };
      toOptions = parseCliConnection(toGiven);
      if (storeKey(fromOptions) === storeKey(toOptions)) {
        throw new CliUsageError(`store move: --from and --to name the same ${o.from} store: name the new one with the --to-* options (--to-redis-url, --to-pg-url, --to-pg-schema, --to-members, --to-cluster-name, --to-map-prefix)`, 'to');
      }
      try {
        skewMs = parseDuration(o.maxClockSkew, '<cli>', 'maxClockSkew', { allowZero: true });
      } catch (error) {
        throw new CliUsageError(`invalid --max-clock-skew: ${(error as InvalidInputError).reason}`, 'maxClockSkew');
      }
    } catch (error) {
      throw asUsageError(error);
    }
    // Each store reached first, so a failure names the one that failed, as every command says it.
    const reach = async (options: ReturnType<typeof parseCliConnection>) => {
      const reached = await reachedStore(options);
      await reached.backend.open().catch((error: unknown) => {
        throw error instanceof StoreUnavailableError || error instanceof SchemaTooNewError ? cannotReach(reached, options, error) : error;
      });
      return reached;
    };
    const from = await reach(fromOptions);
    const to = await reach(toOptions).catch(async (error: unknown) => {
      await from.backend.close().catch(() => undefined);
      throw error;
    });
    try {
      const report = await moveStores(from, to, capabilities, o.finish ? 'finish' : 'prepare', { skewMs, timeoutMs: fromOptions.connectTimeout }, (until, holders) => {
        warn(`waiting until ${new Date(until).toISOString()} for the last permits on ${o.from} to lapse (${holders.join(', ')})\n`);
      });
      print(report, storeMoveText(report));
      const left = report.tasks?.left.length ?? 0;
      if (left > 0) throw new MoveUnfinishedError(`store move: ${left} task(s) are still on ${o.from}, worked there by a live node: stop the old nodes, then run store move tasks --finish again`);
    } finally {
      await from.backend.close().catch(() => undefined);
      await to.backend.close().catch(() => undefined);
    }
  };
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
