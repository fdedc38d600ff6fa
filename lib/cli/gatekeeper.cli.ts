#!/usr/bin/env node
/*
 * nestjs-gatekeeper: the operator's command line. Talks to the cluster directly (no app needed) to list, edit,
 * pause, resume and migrate semaphore definitions, to show or force-release permits, and to show the cluster's
 * live instances and elections and make a leader resign, and to read the jobs' run history. What only an app's code
 * answers (a job's schedule, run now) it asks of a live app's admin API. Every argument is checked before connecting: a wrong
 * command line exits 2 at once, having contacted nothing. The commands themselves live in `*.commands.ts`;
 * this file is the argument table and the dispatch, one cohesive list.
 */
import { libraryVersion } from '../core/library-version';
import { ENV } from '../core/env-vars';
import { Command, CommanderError, Option } from 'commander';
import { validateMigrationRequest, validateUndoRequest } from '../permits/group-migration.rules';
import { SemaphoreAdmin } from '../permits/semaphore-admin';
import { GatekeeperError } from '../core/errors/gatekeeper.error';
import { UnknownSemaphoreError } from '../permits/errors/unknown-semaphore.error';
import { validateDefinition, validateSemaphoreName } from '../permits/definition.validator';
import type { SemaphoreDefinitionInput } from '../permits/semaphore-definition';
import type { Action } from './cli-command';
import { addClusterCommands } from './cluster.commands';
import { addAllocationCommands } from './allocation.commands';
import { addTaskCommands } from './task.commands';
import { addJobCommands } from './job.commands';
import { addScheduleCommands } from './schedule.commands';
import { addHazelcastCommands } from './hazelcast.commands';
import { addStoreCommands } from './store.commands';
import { connectCliStore, parseCliConnection, type RawCliConnectionOptions, type StoresNamed } from './cli-connection';
import { asUsageError, CliUsageError, describeError, DurationRequiredError, EXIT } from './cli-errors';
import { CLI_NAME, definitionTable, hiddenNote, isJob, kindNote, migrationNote, migrationText, permitTable, undoText, withKind } from './cli-format';


/** Where the CLI writes: `out` for results (stdout), `err` for errors and warnings (stderr). */
export interface CliOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

const ENVIRONMENT = [
  [ENV.backend, 'default of --backend (hazelcast, postgres or redis)'],
  [ENV.pgUrl, 'default of --pg-url (postgres://user:password@host:5432/db)'],
  [ENV.pgSchema, "default of --pg-schema (the module's postgres.schema)"],
  [ENV.redisUrl, 'default of --redis-url (redis://user:password@host:6379/0)'],
  [ENV.hzMembers, 'default of --members (comma-separated host:port)'],
  [ENV.hzClusterName, 'default of --cluster-name'],
  [ENV.mapPrefix, "default of --map-prefix (the module's mapPrefix: postgres.mapPrefix, redis.mapPrefix or hazelcast.mapPrefix)"],
  [ENV.adminToken, "the token of the app's admin API (the app's own GATEKEEPER_ADMIN_TOKEN, or its admin.token), for the commands that ask a live app (jobs describe, run, pause, resume)"],
  [ENV.adminPath, "default of --admin-path (the app's admin.path, default gatekeeper)"],
] as const;

const EXIT_HELP = [
  [EXIT.ok, 'done'],
  [EXIT.rejected, 'rejected by the cluster or the app: unknown semaphore, election, job or schedule, invalid definition, conflicting edits (a stale --expected-revision), no such permit, a run now refused'],
  [EXIT.usage, 'usage: the command line is wrong; found before connecting, nothing was contacted'],
  [EXIT.unreachable, 'the cluster could not be reached (for jobs describe and run: nor a live app), or a call to it timed out'],
  [EXIT.runNotCompleted, 'jobs run --wait: the run started but did not complete (failed, stopped), or was still running when the wait ran out'],
] as const;

function helpFooter(): string {
  const pad = Math.max(...ENVIRONMENT.map(([name]) => name.length));
  return [
    '',
    'Durations (--duration, --connect-timeout) are milliseconds or 500ms, 30s, 5m, 1h, as in the library.',
    'Group and name patterns are regexes that must match the whole name.',
    '',
    'Environment variables:',
    ...ENVIRONMENT.map(([name, what]) => `  ${name.padEnd(pad)}  ${what}`),
    '',
    'Exit codes:',
    ...EXIT_HELP.map(([code, what]) => `  ${code}  ${what}`),
    '',
    'With --json, results are printed as JSON on stdout, and errors as {"error": {"code", "exitCode", "type", "message", "field"?, "option"?, "semaphore"?, "election"?, "job"?, "reason"?}} on stderr.',
  ].join('\n');
}

/** A whole number from the command line, at least `min`, or a usage error naming where it was given (`what`). */
/**
 * Which stores the command line names, and which the environment does (Hazelcast's defaults name none): what
 * {@link chooseBackend} picks from when `--backend` is not given.
 */
function storesNamed(program: Command): StoresNamed {
  const from = (option: string) => program.getOptionValueSource(option);
  const given = (options: string[], where: string) => options.some((o) => from(o) === where && String(program.getOptionValue(o) ?? '').trim() !== '');
  const at = (where: string) => ({ hazelcast: given(['members', 'clusterName'], where), postgres: given(['pgUrl'], where), redis: given(['redisUrl'], where) });
  return { flags: at('cli'), env: at('env') };
}

function wholeNumber(value: string, what: string, field: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new CliUsageError(`${what} '${value}' is invalid: expected a whole number, ${min} or more`, field);
  }
  return Number(value);
}

/** Below this, a bare `--duration` number is refused: a permit of under a second is written with its unit (`500ms`). */
const BARE_DURATION_FLOOR_MS = 1_000;

/** The fields `set` was given, checked as the library checks them (a placeholder duration stands in if absent). */
function setFields(name: string, o: { permits?: string; duration?: string; groupPattern?: string; acquirerPattern?: string }): Partial<SemaphoreDefinitionInput> {
  const fields: Partial<SemaphoreDefinitionInput> = {};
  if (o.permits !== undefined) fields.permits = wholeNumber(o.permits, "option '--permits <n>' argument", 'permits', 0);
  if (o.duration !== undefined) {
    // A bare number is milliseconds: `--duration 90` on a job of a minute is 90 ms, almost surely meant as seconds.
    if (/^\d+$/.test(o.duration.trim()) && Number(o.duration) < BARE_DURATION_FLOOR_MS) {
      throw new CliUsageError(`invalid --duration: ${o.duration} would be ${o.duration} ms (a bare number is milliseconds): write '${o.duration}s' for seconds, or '${o.duration}ms' to mean milliseconds`, 'duration', name);
    }
    fields.duration = o.duration;
  }
  if (o.groupPattern !== undefined) fields.groupPattern = o.groupPattern;
  if (o.acquirerPattern !== undefined) fields.acquirerPattern = o.acquirerPattern;
  if (Object.keys(fields).length === 0) {
    throw new CliUsageError(`nothing to set for "${name}": give --permits, --duration, --group-pattern or --acquirer-pattern`);
  }
  validateDefinition({ duration: 1, ...fields, name });
  return fields;
}

/** Builds the program. Its actions check their arguments, then connect, run, and print; errors propagate to {@link main}. */
export function buildProgram(io: CliOutput, { json = false }: { json?: boolean } = {}): Command {
  const program = new Command(CLI_NAME)
    .description('Edit and inspect nestjs-gatekeeper semaphores, inspect the cluster and its elections, and see and run scheduled jobs, in PostgreSQL, Redis or Hazelcast')
    .version(libraryVersion(), '-V, --version', 'print the version')
    .addOption(new Option('--backend <name>', 'where the state is: hazelcast, postgres or redis (default: the one --pg-url, --redis-url or --members names, else hazelcast)').env(ENV.backend))
    .addOption(new Option('--pg-url <url>', 'PostgreSQL connection string (with --backend postgres)').env(ENV.pgUrl))
    .addOption(new Option('--pg-schema <name>', "the module's postgres.schema (with --backend postgres)").env(ENV.pgSchema).default('gatekeeper'))
    .addOption(new Option('--redis-url <url>', 'Redis URL (with --backend redis)').env(ENV.redisUrl))
    .addOption(new Option('--members <addresses>', 'comma-separated member addresses').env(ENV.hzMembers).default('127.0.0.1:5701'))
    .addOption(new Option('--cluster-name <name>', 'Hazelcast cluster name').env(ENV.hzClusterName).default('dev'))
    .addOption(new Option('--map-prefix <prefix>', "the module's mapPrefix (postgres.mapPrefix, redis.mapPrefix or hazelcast.mapPrefix)").env(ENV.mapPrefix).default('gatekeeper'))
    .option('--connect-timeout <duration>', "give up connecting after this long: '5s', '500ms', or ms", '5s')
    .option('--json', 'print JSON for scripts instead of tables (errors too, on stderr)', false)
    .configureOutput({
      writeOut: io.out,
      writeErr: io.err,
      // Under --json, main() prints commander's errors as JSON instead.
      outputError: (text, write) => (json ? undefined : write(text)),
    })
    .exitOverride()
    .showHelpAfterError(json ? false : '(add --help for usage)')
    .addHelpText('after', helpFooter());

  /** Checks everything (connection options included) before connecting, then runs and prints. */
  const execute = async (check: () => Action): Promise<void> => {
    let action: Action;
    let connection: ReturnType<typeof parseCliConnection>;
    try {
      connection = parseCliConnection(program.opts<RawCliConnectionOptions>(), storesNamed(program));
      action = check();
    } catch (error) {
      throw asUsageError(error);
    }
    const stores = await connectCliStore(connection);
    try {
      const outcome = await action(new SemaphoreAdmin(stores.store, stores.clock, { liveInstances: () => stores.liveInstances() }), stores);
      io.out(`${json ? JSON.stringify(outcome.json, null, 2) : outcome.text}\n`);
      if (!json) for (const warning of outcome.warnings ?? []) io.err(`warning: ${warning}\n`);
    } finally {
      await stores.close().catch(() => undefined);
    }
  };
  const checkName = (name: string) => validateSemaphoreName(name);

  // Jobs by default: the semaphores of elections and allocations are listed by `status` and `allocations`, and their
  // permits are not a job's (an operator who pauses everything listed must not stop the leader or an allocation).
  const ALL = ['--all', 'also the semaphores of elections and allocations (election:*, allocation:*), with a KIND column'] as const;
  const FORCE = ['--force', "also change the permits of an election's or allocation's semaphore (election:*, allocation:*), which are not a job's"] as const;

  program.command('list').description('list the definitions of jobs (--all: of elections and allocations too)').option(...ALL).action((o: { all?: boolean }) =>
    execute(() => async (admin) => {
      const all = admin.list();
      const shown = o.all ? all : all.filter((d) => isJob(d.name));
      const hidden = all.filter((d) => !shown.includes(d)).map((d) => d.name);
      return { json: shown.map(withKind), text: `${definitionTable(shown, { kinds: o.all })}${hiddenNote(hidden, 'the definitions')}` };
    }),
  );

  program.command('show <name>').description('show one definition, what its last migration replaced, and its live permits').action((name: string) =>
    execute(() => {
      checkName(name);
      return async (admin, stores) => {
        const definition = await admin.get(name);
        const status = (await admin.permits()).filter((s) => s.name === name);
        const notes = [kindNote(name), migrationNote(definition)].filter((n): n is string => n !== undefined);
        return {
          json: { definition, kind: withKind(definition).kind, permits: status[0]?.permits ?? [] },
          text: [definitionTable([definition]), ...notes, '', permitTable(status, stores.clock.now())].join('\n'),
        };
      };
    }),
  );

  program
    .command('set <name>')
    .description('create a definition (needs --duration) or change the given fields of an existing one')
    .option('--permits <n>', 'permits (0 pauses)')
    .option('--duration <duration>', "permit duration: ms or '30s', '5m'")
    .option('--group-pattern <regex>', 'regex the group must match (whole)')
    .option('--acquirer-pattern <regex>', 'regex the acquirer must match (whole)')
    .option(...FORCE)
    .action((name: string, o: { permits?: string; duration?: string; groupPattern?: string; acquirerPattern?: string; force?: boolean }) =>
      execute(() => {
        checkName(name);
        const fields = setFields(name, o);
        return async (admin) => {
          const exists = admin.list().some((d) => d.name === name) || (await admin.get(name).then(() => true, () => false));
          // An edit keeps every field it was not given (the stored duration included); only a new definition needs one.
          if (!exists && o.duration === undefined) throw new DurationRequiredError(name);
          const force = { force: o.force === true };
          const saved = exists ? await admin.update(name, fields, force) : await admin.put({ ...fields, name, duration: o.duration as string }, force);
          return { json: saved, text: definitionTable([saved]) };
        };
      }),
    );

  program.command('pause <name>').description('set permits to 0 everywhere (remembered for resume)').option(...FORCE).action((name: string, o: { force?: boolean }) =>
    execute(() => {
      checkName(name);
      return async (admin) => {
        const d = await admin.pause(name, { force: o.force === true });
        return { json: d, text: `paused ${name}\n${definitionTable([d])}` };
      };
    }),
  );

  program
    .command('resume <name>')
    .description('restore the permits a pause took away')
    .option('--permits <n>', 'resume with this many permits instead')
    .option(...FORCE)
    .action((name: string, o: { permits?: string; force?: boolean }) =>
      execute(() => {
        checkName(name);
        const permits = o.permits === undefined ? undefined : wholeNumber(o.permits, "option '--permits <n>' argument", 'permits', 1);
        return async (admin) => {
          const d = await admin.resume(name, permits, { force: o.force === true });
          return { json: d, text: `resumed ${name}\n${definitionTable([d])}` };
        };
      }),
    );

  program.command('remove <name>').description('remove a definition').action((name: string) =>
    execute(() => {
      checkName(name);
      return async (admin) => {
        if (!(await admin.remove(name))) throw new UnknownSemaphoreError(name);
        return { json: { removed: name }, text: `removed ${name}` };
      };
    }),
  );

  program
    .command('migrate [names...]')
    .summary('move jobs from one group to another (dry run, undo)')
    .description(
      'move jobs from one group to another: the named semaphores and/or those matching --name-pattern (neither: all jobs; ' +
        "elections' and allocations' semaphores never: edit their group pattern with set) whose " +
        'group pattern lists --from-group get it replaced by --to-group; a regex pattern (.*, prod.*) only with --include-wildcards. ' +
        'Each moved semaphore remembers its pattern: --undo puts it back',
    )
    .option('--from-group <group>', 'the group the jobs run in now')
    .option('--to-group <group>', 'the group to move them to')
    .option('--name-pattern <regex>', 'also select semaphores whose name matches this regex (whole)')
    .option('--include-wildcards', 'also move semaphores whose group pattern is a regex admitting --from-group (it becomes --to-group)', false)
    .option('--force', 'go ahead even if no live node is known in --to-group (a warning today; required once membership is known)', false)
    .option('--undo', 'put back the group patterns the last migration of each selected semaphore replaced (--from-group/--to-group then filter)', false)
    .option('--dry-run', 'only show what would change: each pattern before and after, and what is skipped', false)
    .addHelpText(
      'after',
      `\nExamples:\n  ${CLI_NAME} migrate --from-group production --to-group dr-site --dry-run\n` +
        `  ${CLI_NAME} migrate billing reports --from-group production --to-group dr-site\n` +
        `  ${CLI_NAME} migrate --undo --from-group production --to-group dr-site`,
    )
    .action(
      (
        names: string[],
        o: { fromGroup?: string; toGroup?: string; namePattern?: string; includeWildcards: boolean; force: boolean; undo: boolean; dryRun: boolean },
      ) =>
        execute(() => {
          const selection = { names, ...(o.namePattern !== undefined && { namePattern: o.namePattern }) };
          if (o.undo) {
            for (const [flag, on] of [['--include-wildcards', o.includeWildcards], ['--force', o.force]] as const) {
              if (on) throw new CliUsageError(`${flag} does not apply to --undo`);
            }
            const request = validateUndoRequest({ ...selection, fromGroup: o.fromGroup, toGroup: o.toGroup, dryRun: o.dryRun });
            return async (admin) => {
              const report = await admin.undoMigration(request);
              return { json: report, text: undoText(report) };
            };
          }
          for (const [option, field, value] of [['--from-group <group>', 'fromGroup', o.fromGroup], ['--to-group <group>', 'toGroup', o.toGroup]] as const) {
            if (value === undefined) throw new CliUsageError(`required option '${option}' not specified (or give --undo)`, field);
          }
          const request = validateMigrationRequest({
            ...selection, fromGroup: o.fromGroup as string, toGroup: o.toGroup as string,
            includeWildcards: o.includeWildcards, force: o.force, dryRun: o.dryRun,
          });
          return async (admin) => {
            const report = await admin.migrateGroups(request);
            return { json: report, text: migrationText(report), warnings: report.warnings };
          };
        }),
    );

  program
    .command('permits [name]')
    .description("show live permits of jobs (holder, group, token, expiry), or of the named semaphore (--all: elections' and allocations' too)")
    .option(...ALL)
    .action((name: string | undefined, o: { all?: boolean }) =>
      execute(() => {
        if (name !== undefined) checkName(name);
        return async (admin, stores) => {
          const every = (await admin.permits()).filter((s) => !name || s.name === name);
          const statuses = name || o.all ? every : every.filter((s) => isJob(s.name));
          const hidden = every.filter((s) => !statuses.includes(s) && s.permits.length > 0).map((s) => s.name);
          return { json: statuses.map(withKind), text: `${permitTable(statuses, stores.clock.now(), { kinds: o.all })}${hiddenNote(hidden, 'the live permits')}` };
        };
      }),
    );

  program
    .command('release <name> <token>')
    .description('force-release (revoke) the permit with this fencing token: its holder is told and lets go')
    .action((name: string, token: string) =>
      execute(() => {
        checkName(name);
        const fencingToken = wholeNumber(token, 'fencing token <token>', 'token', 0);
        return async (admin) => {
          if (!(await admin.forceRelease(name, fencingToken))) {
            throw new GatekeeperError(`Semaphore "${name}" has no live permit with fencing token ${token}`);
          }
          return {
            json: { released: name, token: fencingToken },
            text: `revoked ${name} permit ${token}: its holder is told and lets go (or it expires)`,
          };
        };
      }),
    );

  addClusterCommands(program, execute);
  addAllocationCommands(program, execute);
  addTaskCommands(program, execute);
  addJobCommands(program, execute);
  addScheduleCommands(program, execute);
  addStoreCommands(program, () => storesNamed(program), (result, text) => io.out(`${json ? JSON.stringify(result, null, 2) : text}\n`));
  addHazelcastCommands(program);
  return program;
}

/** Whether `--json` is among the options (before a `--`), known before commander parses, so its errors are JSON too. */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).slice(2).includes('--json');
}

/** Runs the CLI with `argv` (as `process.argv`: node, script, args...) and returns the exit code. */
export async function main(argv: string[], io: CliOutput = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }): Promise<number> {
  const json = wantsJson(argv);
  try {
    await buildProgram(io, { json }).parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return EXIT.ok; // --help, --version
    const described = describeError(error);
    if (json) io.err(`${JSON.stringify(described.json)}\n`);
    else if (!(error instanceof CommanderError)) io.err(`${described.text}\n`); // commander printed its own
    return described.exitCode;
  }
}

if (require.main === module) {
  void main(process.argv).then((code) => process.exit(code));
}
