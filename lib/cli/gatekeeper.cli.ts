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
import { SemaphoreAdmin } from '../permits/semaphore-admin';
import type { Action } from './cli-command';
import { addClusterCommands } from './cluster.commands';
import { addAllocationCommands } from './allocation.commands';
import { addTaskCommands } from './task.commands';
import { addJobCommands } from './job.commands';
import { addScheduleCommands } from './schedule.commands';
import { addFencingCommands } from './fencing.commands';
import { addHazelcastCommands } from './hazelcast.commands';
import { addSemaphoreCommands } from './semaphore.commands';
import { addStoreCommands } from './store.commands';
import { connectCliStore, parseCliConnection, type RawCliConnectionOptions, type StoresNamed } from './cli-connection';
import { asUsageError, describeError, EXIT } from './cli-errors';
import { CLI_NAME } from './cli-format';


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
  [EXIT.jobDown, 'jobs health: the job has not completed a run within --within anywhere (and is not paused)'],
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
  addSemaphoreCommands(program, execute);
  addClusterCommands(program, execute);
  addAllocationCommands(program, execute);
  addTaskCommands(program, execute);
  addJobCommands(program, execute);
  addScheduleCommands(program, execute);
  addStoreCommands(program, () => storesNamed(program), (result, text) => io.out(`${json ? JSON.stringify(result, null, 2) : text}\n`), (text) => io.err(text));
  addHazelcastCommands(program);
  addFencingCommands(program, (text) => io.out(text));
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
  // A reader that stopped reading (`nestjs-gatekeeper --help | head`) ends the output, not with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(EXIT.ok);
    });
  }
  void main(process.argv).then((code) => process.exit(code));
}
