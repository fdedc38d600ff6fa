import { refuseUnknownSubcommands } from './unknown-subcommand';
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { SemaphoreAdmin } from '../permits/semaphore-admin';
import { readableHistory } from '../schedules/job-history.rules';
import { ScheduleCatalog } from '../schedules/schedule-catalog';
import type { CronValidator, ScheduleDefinitionInput } from '../schedules/schedule-definition';
import { validateScheduleDefinition, validateScheduleId } from '../schedules/schedule-definition.validator';
import type { LiveScheduleRecord } from '../schedules/schedule-record';
import { parseExpectedRevision } from '../schedules/schedule-request.input';
import { CRON_HORIZON_NOTE } from '../core/cron-calendar';
import { loadCronTime } from '../nest/schedule-metadata/schedule-interval.reader';
import { CronTrigger } from '../nest/schedule-metadata/cron-trigger';
import type { Action, Execute } from './cli-command';
import type { CliStores } from './cli-connection';
import { CliUsageError } from './cli-errors';
import { changeText, scheduleListText, scheduleText, type ListedSchedule, type ScheduleTakers, type ShownSchedule } from './cli-schedule-format';
import { InvalidInputError } from '../core/errors/invalid-input.error';
import { unknownSchedule } from '../schedules/errors/schedule.errors';

/** Fire instants `schedules show` lists. */
const NEXT_RUNS = 5;
/** The clock-skew bound the module assumes by default (`maxClockSkew`): a new id's first revision starts above it. */
const DEFAULT_SKEW_MS = 500;

/**
 * Checks cron expressions with the `cron` package of the @nestjs/schedule installed beside the CLI (the app's, when
 * it runs from the app's node_modules); without it, the catalog checks only the expression's shape and the nodes
 * report an expression their package cannot read.
 */
function cronValidator(): CronValidator | undefined {
  if (!loadCronTime()) return undefined;
  return (expression, timeZone) => CronTrigger.validate(expression, timeZone);
}

/** Triggers by zone and expression: reading one with the cron package costs milliseconds, and tenants share a few. */
const triggers = new Map<string, CronTrigger | string>();

/**
 * The next `count` fire instants of a schedule, or none when paused or the cron package cannot be loaded here; with
 * a note when the package's horizon ended before `count`.
 */
function nextRuns(record: LiveScheduleRecord, count: number, now: number): { nextRuns: number[]; nextRunsNote?: string } {
  const { paused, cron, timeZone } = record.definition;
  if (paused || !loadCronTime()) return { nextRuns: [] };
  const key = `${timeZone}\u0000${cron}`;
  let trigger = triggers.get(key);
  if (trigger === undefined) triggers.set(key, (trigger = CronTrigger.fromExpression(cron, timeZone)));
  if (typeof trigger === 'string') return { nextRuns: [] };
  const instants = trigger.next(now, count);
  return instants.length < count ? { nextRuns: instants, nextRunsNote: CRON_HORIZON_NOTE } : { nextRuns: instants };
}

/** A schedule's field checked before connecting: a usage error naming the option (and the schedule). */
function checked<T>(parse: () => T, where?: string): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInputError) throw new CliUsageError(where ? `${where}: ${error.message}` : error.message, error.field);
    throw error;
  }
}

/** The definition in `--file`, read and validated (cron included, when the cron package is there) before connecting. */
function readDefinition(file: string): ScheduleDefinitionInput {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliUsageError(`invalid --file: cannot read ${file}: ${(error as Error).message}`, 'file');
  }
  let input: ScheduleDefinitionInput;
  try {
    input = JSON.parse(text) as ScheduleDefinitionInput;
  } catch (error) {
    throw new CliUsageError(`invalid --file: ${file} is not JSON: ${(error as Error).message}`, 'file');
  }
  checked(() => validateScheduleDefinition(input, { validateCron: cronValidator() }), file);
  return input;
}

/** The catalog the apps' `ScheduleService` writes through, on the CLI's connection: every write a compare-and-set. */
async function catalogOf(stores: CliStores): Promise<ScheduleCatalog> {
  return new ScheduleCatalog(await stores.schedules(), { by: `cli@${hostname()}`, validateCron: cronValidator(), skewMs: DEFAULT_SKEW_MS });
}

/** Who takes part in `record`, as far as the cluster tells: its semaphore's live holders and whether it is defined. */
async function takersOf(admin: SemaphoreAdmin, record: LiveScheduleRecord): Promise<ScheduleTakers> {
  const status = (await admin.permits()).find((s) => s.name === record.definition.semaphore);
  const holders = (status?.permits ?? []).map((p) => ({ acquirer: p.acquirer, group: p.group, instance: p.instance, fencingToken: p.fencingToken, expiresAt: p.expiresAt }));
  const semaphoreDefined = status?.definition !== undefined;
  const verdict = record.definition.paused ? 'paused' : holders.length > 0 ? 'running' : semaphoreDefined ? 'noHolder' : 'notTakenUp';
  return { verdict, holders, semaphoreDefined };
}

/** The newest run of every job with a history, by job (one read of the cluster's history map). */
async function lastRuns(stores: CliStores): Promise<Map<string, ListedSchedule['lastRun']>> {
  const histories = await (await stores.history()).list();
  return new Map(histories.map(({ history }) => [history.job, readableHistory(history).runs[0]]));
}

function listed(record: LiveScheduleRecord, lastRun: ListedSchedule['lastRun'], now: number): ListedSchedule {
  const [nextRun] = nextRuns(record, 1, now).nextRuns;
  return {
    id: record.id, revision: record.revision, updatedAt: record.updatedAt, updatedBy: record.updatedBy, definition: record.definition,
    ...(nextRun !== undefined && { nextRun }), ...(lastRun && { lastRun }),
  };
}

const CATALOG_NOTE =
  "Works on the cluster's schedule catalog directly (no app needed), as ScheduleService does: every change is a " +
  'compare-and-set on the schedule\'s record; with --expected-revision it is refused (exit 1, REVISION_CONFLICT) when the ' +
  'schedule moved on since that revision. The CLI has no app code: it checks a handler name\'s form only (a node deployed later ' +
  'may have it); schedules show tells whether a live node runs it.';

/**
 * Adds `schedules` and its subcommands: the runtime schedules (`ScheduleService.upsert`) listed, shown, upserted
 * from a JSON file, paused, resumed and removed, on the cluster's catalog directly.
 */
export function addScheduleCommands(program: Command, execute: Execute): void {
  const schedules = refuseUnknownSubcommands(program.command('schedules')).description('schedules defined at runtime: list (default), show, upsert, pause, resume, remove, on the cluster directly');
  const revisionOption = ['--expected-revision <n>', 'refuse the change unless the schedule is at this revision (0: it must not exist)'] as const;

  schedules.command('list', { isDefault: true })
    .description('every runtime schedule: handler, cron, zone, paused, revision, next run, last run (from the job history under its id)')
    .addHelpText('after', `\n${CATALOG_NOTE}`)
    .action(() => execute(() => async (_admin, stores) => {
      const [records, runs] = await Promise.all([(await catalogOf(stores)).list(), lastRuns(stores)]);
      const now = Date.now();
      const shown = records.map((r) => listed(r, runs.get(r.id), now));
      return { json: shown, text: scheduleListText(shown, now) };
    }));

  schedules.command('show <id>')
    .description('one schedule: definition, revision, next runs, last run, and which live nodes run it (hold its permit)')
    .action((id: string) => execute(() => {
      checked(() => validateScheduleId(id));
      return async (admin, stores) => {
        const record = await (await catalogOf(stores)).get(id);
        if (!record) throw unknownSchedule(id);
        const now = Date.now();
        const [runs, takers] = await Promise.all([lastRuns(stores), takersOf(admin, record)]);
        const shown: ShownSchedule = { ...listed(record, runs.get(id), now), ...nextRuns(record, NEXT_RUNS, now), takers };
        return { json: shown, text: scheduleText(shown, now) };
      };
    }));

  schedules.command('upsert')
    .description('create a schedule or replace its definition, from a JSON file holding a ScheduleDefinitionInput (id, cron, timeZone, handler, data, duration, ...)')
    .requiredOption('--file <path>', 'the definition, as JSON')
    .option(...revisionOption)
    .addHelpText('after', `\nAn equal definition writes nothing (unchanged). ${CATALOG_NOTE}`)
    .action((o: { file: string; expectedRevision?: string }) => execute(() => {
      const input = readDefinition(o.file);
      const expectedRevision = checked(() => parseExpectedRevision(input.id, o.expectedRevision));
      return change((catalog) => catalog.upsert(input, { expectedRevision }), 'upsert');
    }));

  for (const action of ['pause', 'resume', 'remove'] as const) {
    const what = { pause: 'pause a schedule: it fires nowhere until resumed (definition and history kept)', resume: 'resume a paused schedule', remove: 'remove a schedule (its history stays; its revision lives on)' }[action];
    schedules.command(`${action} <id>`).description(what).option(...revisionOption)
      .action((id: string, o: { expectedRevision?: string }) => execute(() => {
        checked(() => validateScheduleId(id));
        const expectedRevision = checked(() => parseExpectedRevision(id, o.expectedRevision));
        return change((catalog) => catalog[action](id, { expectedRevision }), action);
      }));
  }
}

/** A change through the catalog, printed. */
function change(run: (catalog: ScheduleCatalog) => ReturnType<ScheduleCatalog['pause']>, action: 'upsert' | 'pause' | 'resume' | 'remove'): Action {
  return async (_admin, stores) => {
    await stores.editing('schedules');
    const result = await run(await catalogOf(stores));
    return { json: result, text: changeText(result, action) };
  };
}
