import type { Command } from 'commander';
import { GatekeeperError } from '../core/errors/gatekeeper.error';
import { validateDefinition, validateSemaphoreName } from '../permits/definition.validator';
import { validateMigrationRequest, validateUndoRequest } from '../permits/group-migration.rules';
import type { SemaphoreDefinitionInput } from '../permits/semaphore-definition';
import type { Execute } from './cli-command';
import { CliUsageError, DurationRequiredError } from './cli-errors';
import { CLI_NAME, definitionTable, hiddenNote, isJob, kindNote, migrationNote, migrationText, permitTable, undoText, withKind } from './cli-format';
import { unknownSemaphore } from '../permits/errors/semaphore.errors';

/** A whole number from the command line, at least `min`, or a usage error naming where it was given (`what`). */
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

/**
 * Adds the commands on semaphore definitions and their permits: `list`, `show`, `set`, `pause`, `resume`, `remove`,
 * `migrate` (groups, with dry run and undo), `permits` and `release`. Each checks its arguments offline, then runs
 * over the permit admin once connected (see {@link Execute}).
 */
export function addSemaphoreCommands(program: Command, execute: Execute): void {
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
        if (!(await admin.remove(name))) throw unknownSemaphore(name);
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

}
