#!/usr/bin/env node
/*
 * nestjs-gatekeeper: the operator's command line. Talks to the cluster directly (no app needed) to list, edit,
 * pause, resume and migrate semaphore definitions and to show or force-release permits.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { SemaphoreAdmin } from '../admin/semaphore-admin';
import { GatekeeperError } from '../errors/gatekeeper.error';
import { StoreUnavailableError } from '../errors/store-unavailable.error';
import { UnknownSemaphoreError } from '../errors/unknown-semaphore.error';
import { systemClock } from '../gatekeeper/clock';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';
import type { SemaphoreStatus } from '../engine/semaphore-status';
import { connectCliStore, type CliConnectionOptions } from './cli-connection';
import { renderTable } from './cli-table';

/** Exit codes: 0 done, 1 rejected (bad input, unknown semaphore), 2 usage, 3 cluster unreachable. */
const EXIT = { ok: 0, rejected: 1, usage: 2, unreachable: 3 } as const;

type Global = CliConnectionOptions & { json: boolean };
type Action = (admin: SemaphoreAdmin) => Promise<{ json: unknown; text: string }>;

const wholeNumber = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number, 0 or more');
  return Number(value);
};

const definitionRow = (d: SemaphoreDefinition) => [
  d.name,
  d.permits === 0 ? `0 (paused${d.pausedFrom ? ` from ${d.pausedFrom}` : ''})` : d.permits,
  `${d.durationMs} ms`,
  d.groupPattern,
  d.acquirerPattern,
];
const definitionTable = (ds: SemaphoreDefinition[]) =>
  ds.length ? renderTable(['NAME', 'PERMITS', 'DURATION', 'GROUP', 'ACQUIRER'], ds.map(definitionRow)) : 'no definitions';
const permitTable = (statuses: SemaphoreStatus[]) => {
  const now = Date.now();
  const rows = statuses.flatMap((s) =>
    s.permits.map((p) => [s.name, p.acquirer, p.group, p.fencingToken, new Date(p.expiresAt).toISOString(), `${((p.expiresAt - now) / 1000).toFixed(1)} s`]),
  );
  return rows.length ? renderTable(['SEMAPHORE', 'HOLDER', 'GROUP', 'TOKEN', 'EXPIRES', 'LEFT'], rows) : 'no live permits';
};

/** Builds the program; `run` connects, performs one action, prints, and returns the exit code. */
export function buildProgram(out: (text: string) => void, err: (text: string) => void): { program: Command; exitCode: () => number } {
  let code: number = EXIT.ok;
  const program = new Command('nestjs-gatekeeper')
    .description('Edit and inspect nestjs-gatekeeper semaphores in a Hazelcast cluster')
    .option('--members <addresses>', 'comma-separated member addresses', process.env.GATEKEEPER_HZ_MEMBERS ?? '127.0.0.1:5701')
    .option('--cluster-name <name>', 'Hazelcast cluster name', process.env.GATEKEEPER_HZ_CLUSTER_NAME ?? 'dev')
    .option('--map-prefix <prefix>', 'the module\'s hazelcast.mapPrefix', 'gatekeeper')
    .option('--connect-timeout <ms>', 'give up connecting after this many ms', wholeNumber, 5000)
    .option('--json', 'print JSON for scripts instead of tables', false)
    .configureOutput({ writeOut: out, writeErr: err })
    .exitOverride()
    .showHelpAfterError();

  const run = (action: Action) => async () => {
    const global = program.opts<Global>();
    let store: Awaited<ReturnType<typeof connectCliStore>> | undefined;
    try {
      store = await connectCliStore(global);
      const result = await action(new SemaphoreAdmin(store, systemClock));
      out(`${global.json ? JSON.stringify(result.json, null, 2) : result.text}\n`);
    } catch (error) {
      code = error instanceof StoreUnavailableError ? EXIT.unreachable : EXIT.rejected;
      err(`error: ${(error as Error).message}\n`);
    } finally {
      await store?.close().catch(() => undefined);
    }
  };

  program.command('list').description('list every definition').action(
    run(async (admin) => ({ json: admin.list(), text: definitionTable(admin.list()) })),
  );
  program.command('show <name>').description('show one definition and its live permits').action((name: string) =>
    run(async (admin) => {
      const definition = await admin.get(name);
      const status = (await admin.permits()).filter((s) => s.name === name);
      return { json: { definition, permits: status[0]?.permits ?? [] }, text: `${definitionTable([definition])}\n\n${permitTable(status)}` };
    })(),
  );
  program
    .command('set <name>')
    .description('create a definition (needs --duration) or change the given fields of an existing one')
    .option('--permits <n>', 'permits (0 pauses)', wholeNumber)
    .option('--duration <duration>', "permit duration: ms or '30s', '5m'")
    .option('--group-pattern <regex>', 'regex the group must match (whole)')
    .option('--acquirer-pattern <regex>', 'regex the acquirer must match (whole)')
    .action((name: string, o: { permits?: number; duration?: string; groupPattern?: string; acquirerPattern?: string }) =>
      run(async (admin) => {
        const fields = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
        const exists = admin.list().some((d) => d.name === name) || (await admin.get(name).then(() => true, () => false));
        const saved = exists ? await admin.update(name, fields) : await admin.put({ ...fields, name, duration: o.duration as string });
        return { json: saved, text: definitionTable([saved]) };
      })(),
    );
  program.command('pause <name>').description('set permits to 0 everywhere (remembered for resume)').action((name: string) =>
    run(async (admin) => {
      const d = await admin.pause(name);
      return { json: d, text: `paused ${name}\n${definitionTable([d])}` };
    })(),
  );
  program
    .command('resume <name>')
    .description('restore the permits a pause took away')
    .option('--permits <n>', 'resume with this many permits instead', wholeNumber)
    .action((name: string, o: { permits?: number }) =>
      run(async (admin) => {
        const d = await admin.resume(name, o.permits);
        return { json: d, text: `resumed ${name}\n${definitionTable([d])}` };
      })(),
    );
  program.command('remove <name>').description('remove a definition').action((name: string) =>
    run(async (admin) => {
      if (!(await admin.remove(name))) throw new UnknownSemaphoreError(name);
      return { json: { removed: name }, text: `removed ${name}` };
    })(),
  );
  program
    .command('migrate')
    .description('move every semaphore whose group pattern admits --from-group to --to-group')
    .requiredOption('--from-group <group>', 'the group jobs run in now')
    .requiredOption('--to-group <group>', 'the group to move them to')
    .option('--dry-run', 'only show what would change', false)
    .action((o: { fromGroup: string; toGroup: string; dryRun: boolean }) =>
      run(async (admin) => {
        const changes = await admin.migrate(o.fromGroup, o.toGroup, { dryRun: o.dryRun });
        const verb = o.dryRun ? 'would move' : 'moved';
        const text = changes.length
          ? `${verb} ${changes.length} semaphore(s)\n${renderTable(['NAME', 'FROM', 'TO'], changes.map((c) => [c.name, c.from, c.to]))}`
          : `no semaphore admits group "${o.fromGroup}"`;
        return { json: { dryRun: o.dryRun, changes }, text };
      })(),
    );
  program.command('permits [name]').description('show live permits (holder, group, token, expiry)').action((name?: string) =>
    run(async (admin) => {
      const statuses = (await admin.permits()).filter((s) => !name || s.name === name);
      return { json: statuses, text: permitTable(statuses) };
    })(),
  );
  program.command('release <name> <token>').description('force-release (revoke) the permit with this fencing token: its holder is told and lets go').action((name: string, token: string) =>
    run(async (admin) => {
      if (!(await admin.forceRelease(name, wholeNumber(token)))) {
        throw new GatekeeperError(`Semaphore "${name}" has no live permit with fencing token ${token}`);
      }
      return { json: { released: name, token: Number(token) }, text: `revoked ${name} permit ${token}: its holder is told and lets go (or it expires)` };
    })(),
  );
  return { program, exitCode: () => code };
}

/** Runs the CLI with `argv` and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const { program, exitCode } = buildProgram((t) => process.stdout.write(t), (t) => process.stderr.write(t));
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof InvalidArgumentError) return EXIT.usage;
    throw error;
  }
  return exitCode();
}

if (require.main === module) {
  void main(process.argv).then((code) => process.exit(code));
}
