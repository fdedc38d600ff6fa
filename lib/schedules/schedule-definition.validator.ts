import { checkInInput, resolveCheckIn } from './check-in';
import { z } from 'zod';
import { absentAs, durationInput, onlyKeys, regexInput } from '../core/input-fields';
import { parseInput, withReason, type InputErrorFactory } from '../core/input-schema';
import { LEADER_JOB_PREFIX } from '../core/leader-job-name';
import { MAX_NAME_LENGTH, nameInput, shownName } from '../core/names';
import { ELECTION_SEMAPHORE_PREFIX, SEMAPHORE_NAME } from '../permits/definition.validator';
import { canonicalData } from './schedule-data';
import { resolveJobPolicy, type JobHealthPolicy } from './job-policy';
import {
  DEFAULT_CATCH_UP_WINDOW_MS,
  MAX_SCHEDULE_ID_LENGTH,
  SCHEDULE_SEMAPHORE_PREFIX,
  type CronValidator,
  type ScheduleDefinition,
  type ScheduleDefinitionInput,
} from './schedule-definition';
import { invalidSchedule } from './errors/schedule.errors';

/** The most characters a handler name may have. */
const MAX_HANDLER_LENGTH = MAX_NAME_LENGTH;

/** Every field of a schedule, as the error for any other key lists them. */
const SCHEDULE_FIELDS = [
  'id', 'cron', 'timeZone', 'handler', 'data', 'paused', 'semaphore', 'permits', 'duration', 'groupPattern', 'acquirerPattern',
  'missedRuns', 'catchUpWindow', 'overlap', 'replaceWait', 'health', 'checkIn',
] as const;

const notBlank = (text: string) => text.trim() !== '';

/** A schedule's id: a name (lib/core/names) of at most `MAX_SCHEDULE_ID_LENGTH` characters (its default semaphore's name must fit). */
const SCHEDULE_ID = nameInput({ max: MAX_SCHEDULE_ID_LENGTH });

/** The id of a schedule being defined: it is the job's name in the run history, where `leader:` names @LeaderOnly methods. */
const DEFINED_ID = SCHEDULE_ID.refine((id) => !id.startsWith(LEADER_JOB_PREFIX), {
  error: `must not start with "${LEADER_JOB_PREFIX}" (the run history's names of @LeaderOnly methods)`,
});

const SCHEDULE_OBJECT = z.looseObject({}, {
  error: ({ input }) => `must be an object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`,
});

/** Only a schedule's fields: any other key is refused before a field is checked (a misspelt `timezone` is the mistake to name). */
const SCHEDULE_KEYS = onlyKeys(SCHEDULE_FIELDS, `is not a schedule field (expected one of ${SCHEDULE_FIELDS.join(', ')})`);

const notZone = ({ input }: { input: unknown }) => `must be an IANA time zone such as 'Europe/Berlin', got ${show(input)}`;
const TIME_ZONE = z
  .string({ error: notZone })
  .refine(notBlank, { error: notZone, abort: true })
  .refine(isKnownTimeZone, { error: ({ input }) => `'${String(input)}' is not an IANA time zone this runtime knows (e.g. 'UTC', 'Europe/Berlin')` })
  .default('UTC');

const notCron = ({ input }: { input: unknown }) => `must be a cron expression (a string of 5 or 6 fields), got ${show(input)}`;
/** A cron expression's shape: 5 or 6 fields, written back separated by single spaces. Its grammar is the runner's to check. */
const CRON = z
  .string({ error: notCron })
  .refine(notBlank, { error: notCron, abort: true })
  .transform((cron, context) => {
    const fields = cron.trim().split(/\s+/);
    if (fields.length === 5 || fields.length === 6) return fields.join(' ');
    context.addIssue({
      code: 'custom',
      message: `'${cron}' has ${fields.length} field${fields.length === 1 ? '' : 's'}; a cron expression has 5 (minute first) or 6 (second first)`,
      input: cron,
    });
    return z.NEVER;
  });

const HANDLER = nameInput({ max: MAX_HANDLER_LENGTH, what: 'a non-empty string (a handler registered in code)' });

/** A schedule's own semaphore: a semaphore name, not an election's. */
const SEMAPHORE = SEMAPHORE_NAME.refine((name) => !name.startsWith(ELECTION_SEMAPHORE_PREFIX), {
  error: ({ input }) => `'${String(input)}' belongs to a leader election (names starting '${ELECTION_SEMAPHORE_PREFIX}'); give the schedule its own`,
});

const PATTERN = regexInput(show).default('.*');

/*
 * The fields in three groups, checked in turn with the two rules across fields between them (the cron expression in
 * its zone; the job policy): the first bad field, in this order, is the error.
 */

/** When it fires: the zone (UTC when absent), then the expression's shape. */
const TIMING = z.object({ timeZone: TIME_ZONE, cron: CRON });

/** What runs: the handler, whether it is paused (not when absent), how many nodes at once (1 when absent; pause with `paused`). */
const RUNS = z.object({
  handler: HANDLER,
  paused: absentAs(false, z.boolean({ error: ({ input }) => `must be true or false, got ${show(input)}` })),
  permits: absentAs(1, withReason(z.int().min(1), (given) => `must be a whole number, 1 or more (pause with paused: true), got ${show(given)}`)),
});

/** Who may run it: the semaphore (`schedule:<id>` when absent), its permits' duration, the group and acquirer patterns (any when absent). */
const PERMIT = z.object({ semaphore: SEMAPHORE.optional(), duration: durationInput(), groupPattern: PATTERN, acquirerPattern: PATTERN });

const scheduleError = (schedule: string): InputErrorFactory => (field, reason) => invalidSchedule(schedule, field, reason);

/**
 * The schedule an error names, for a bad id: `'<unnamed>'` when it is no id at all, the id as errors show a bad name
 * (escaped, its first 40 characters) when it is too long or holds what no name may.
 */
function scheduleNamed(id: unknown): string {
  if (typeof id !== 'string' || !notBlank(id)) return '<unnamed>';
  return SCHEDULE_ID.safeParse(id).success ? id : shownName(id);
}

/** Checks a schedule id, throwing {@link InvalidInputError} on `id` when it is not a name (lib/core/names) that fits. */
export function validateScheduleId(id: unknown): string {
  return parseInput(SCHEDULE_ID, id, scheduleError(scheduleNamed(id)), { field: 'id' });
}

/** How {@link validateScheduleDefinition} checks what it cannot check alone. */
export interface ScheduleValidation {
  /** Checks the cron expression's grammar (the runner's cron package). Without it, only its shape is checked. */
  readonly validateCron?: CronValidator;
}

/**
 * Validates a schedule as an application writes it and returns the stored form, every default filled in.
 * Throws {@link InvalidInputError} naming the schedule's id and the first bad field.
 */
export function validateScheduleDefinition(input: ScheduleDefinitionInput, { validateCron }: ScheduleValidation = {}): ScheduleDefinition {
  parseInput(SCHEDULE_OBJECT, input, scheduleError('<unnamed>'), { field: 'definition' });
  // The id first: every later error names the schedule.
  const id = parseInput(DEFINED_ID, input.id, scheduleError(scheduleNamed(input.id)), { field: 'id' });
  const error = scheduleError(id);
  const fail = (field: string, reason: string): never => {
    throw error(field, reason);
  };
  parseInput(SCHEDULE_KEYS, input, error);
  const { timeZone, cron } = parseInput(TIMING, input, error);
  const cronError = checkCron(validateCron, cron, timeZone);
  if (cronError !== undefined) fail('cron', `'${cron}' in ${timeZone}: ${cronError}`);
  const { handler, paused, permits } = parseInput(RUNS, input, error);
  // The policy a decorator has too, by the same rule; a schedule sets these four (it always holds its permit).
  const { missedRuns, catchUpWindow, overlap: overlapInput, replaceWait, health } = input;
  const policy = resolveJobPolicy({ missedRuns, catchUpWindow, overlap: overlapInput, replaceWait, health }, fail, { catchUpWindowMs: DEFAULT_CATCH_UP_WINDOW_MS });
  const { overlap } = policy;
  const data = canonicalData(id, input.data);
  const { semaphore = `${SCHEDULE_SEMAPHORE_PREFIX}${id}`, duration: durationMs, groupPattern, acquirerPattern } = parseInput(PERMIT, input, error);
  return {
    id,
    cron,
    timeZone,
    handler,
    data,
    paused,
    semaphore,
    permits,
    durationMs,
    groupPattern,
    acquirerPattern,
    missedRuns: policy.missedRuns,
    ...(policy.missedRuns === 'runOnce' && { catchUpWindowMs: policy.catchUpWindowMs }),
    overlap,
    ...(overlap === 'replace' && { replaceWaitMs: policy.replaceWaitMs }),
    ...(policy.health !== undefined && { health: storedHealth(policy.health) }),
    ...(input.checkIn !== undefined && { checkIn: resolveCheckIn(input.checkIn, fail) }),
  };
}

/** Turns a stored definition back into the input form (durations in ms), e.g. to edit one field of it. */
export function toScheduleInput(definition: ScheduleDefinition): ScheduleDefinitionInput {
  return {
    id: definition.id,
    cron: definition.cron,
    timeZone: definition.timeZone,
    handler: definition.handler,
    data: definition.data,
    paused: definition.paused,
    semaphore: definition.semaphore,
    permits: definition.permits,
    duration: definition.durationMs,
    groupPattern: definition.groupPattern,
    acquirerPattern: definition.acquirerPattern,
    missedRuns: definition.missedRuns,
    ...(definition.catchUpWindowMs !== undefined && { catchUpWindow: definition.catchUpWindowMs }),
    overlap: definition.overlap,
    ...(definition.replaceWaitMs !== undefined && { replaceWait: definition.replaceWaitMs }),
    ...(definition.health !== undefined && { health: healthInput(definition.health) }),
    ...(definition.checkIn !== undefined && { checkIn: checkInInput(definition.checkIn) }),
  };
}

/** A schedule's health as it is stored: its grace only when it has one. */
function storedHealth({ graceMs, failureThreshold, recoveryThreshold }: JobHealthPolicy): NonNullable<ScheduleDefinition['health']> {
  return { ...(graceMs !== undefined && { graceMs }), failureThreshold, recoveryThreshold };
}

/** A stored schedule's `health` in the input form (its grace in ms). */
export function healthInput(health: NonNullable<ScheduleDefinition['health']>): NonNullable<ScheduleDefinitionInput['health']> {
  const { graceMs, failureThreshold, recoveryThreshold } = health;
  return { ...(graceMs !== undefined && { grace: graceMs }), failureThreshold, recoveryThreshold };
}

function checkCron(validateCron: CronValidator | undefined, cron: string, timeZone: string): string | undefined {
  if (!validateCron) return undefined;
  try {
    return validateCron(cron, timeZone);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
}
