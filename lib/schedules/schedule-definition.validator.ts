import { parseDuration, type DurationInput } from '../core/duration';
import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { patternError } from '../core/pattern';
import { LEADER_JOB_PREFIX } from '../core/leader-job-name';
import { ELECTION_SEMAPHORE_PREFIX, validateSemaphoreName } from '../permits/definition.validator';
import { InvalidScheduleError } from './errors/invalid-schedule.error';
import { canonicalData } from './schedule-data';
import { resolveJobPolicy } from './job-policy';
import {
  DEFAULT_CATCH_UP_WINDOW_MS,
  MAX_SCHEDULE_ID_LENGTH,
  SCHEDULE_SEMAPHORE_PREFIX,
  type CronValidator,
  type ScheduleDefinition,
  type ScheduleDefinitionInput,
} from './schedule-definition';

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'id', 'cron', 'timeZone', 'handler', 'data', 'paused', 'semaphore', 'permits', 'duration', 'groupPattern', 'acquirerPattern',
  'missedRuns', 'catchUpWindow', 'overlap', 'replaceWait',
]);

/** The most characters a handler name may have. */
const MAX_HANDLER_LENGTH = 200;

/** Checks a schedule id, throwing {@link InvalidScheduleError} on `id` when it is not a non-empty string that fits. */
export function validateScheduleId(id: unknown): string {
  if (typeof id !== 'string' || id.trim() === '') {
    throw new InvalidScheduleError('<unnamed>', 'id', `must be a non-empty string, got ${JSON.stringify(id) ?? String(id)}`);
  }
  if (id.length > MAX_SCHEDULE_ID_LENGTH) {
    throw new InvalidScheduleError(`${id.slice(0, 40)}…`, 'id', `must be at most ${MAX_SCHEDULE_ID_LENGTH} characters, got ${id.length}`);
  }
  return id;
}

/** How {@link validateScheduleDefinition} checks what it cannot check alone. */
export interface ScheduleValidation {
  /** Checks the cron expression's grammar (the runner's cron package). Without it, only its shape is checked. */
  readonly validateCron?: CronValidator;
}

/**
 * Validates a schedule as an application writes it and returns the stored form, every default filled in.
 * Throws {@link InvalidScheduleError} naming the schedule's id and the first bad field.
 */
export function validateScheduleDefinition(input: ScheduleDefinitionInput, { validateCron }: ScheduleValidation = {}): ScheduleDefinition {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidScheduleError('<unnamed>', 'definition', `must be an object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`);
  }
  const id = validateScheduleId(input.id);
  const fail = (field: string, reason: string): never => {
    throw new InvalidScheduleError(id, field, reason);
  };
  // The id is the job's name in the run history, where `leader:` names @LeaderOnly methods.
  if (id.startsWith(LEADER_JOB_PREFIX)) fail('id', `must not start with "${LEADER_JOB_PREFIX}" (the run history's names of @LeaderOnly methods)`);
  for (const key of Object.keys(input)) {
    if (!KNOWN_FIELDS.has(key)) fail(key, `is not a schedule field (expected one of ${[...KNOWN_FIELDS].join(', ')})`);
  }
  const timeZone = validateTimeZone(id, input.timeZone);
  const cron = validateCronShape(id, input.cron);
  const cronError = checkCron(validateCron, cron, timeZone);
  if (cronError !== undefined) fail('cron', `'${cron}' is not a valid cron expression in ${timeZone}: ${cronError}`);
  if (typeof input.handler !== 'string' || input.handler.trim() === '') fail('handler', `must be a non-empty string (a handler registered in code), got ${show(input.handler)}`);
  if (input.handler.length > MAX_HANDLER_LENGTH) fail('handler', `must be at most ${MAX_HANDLER_LENGTH} characters, got ${input.handler.length}`);
  const paused = input.paused ?? false;
  if (typeof paused !== 'boolean') fail('paused', `must be true or false, got ${show(paused)}`);
  const permits = input.permits ?? 1;
  if (typeof permits !== 'number' || !Number.isSafeInteger(permits) || permits < 1) {
    fail('permits', `must be a whole number, 1 or more (pause with paused: true), got ${show(permits)}`);
  }
  // The policy a decorator has too, by the same rule; a schedule sets these four (it always holds its permit).
  const { missedRuns, catchUpWindow, overlap: overlapInput, replaceWait } = input;
  const policy = resolveJobPolicy({ missedRuns, catchUpWindow, overlap: overlapInput, replaceWait }, fail, { catchUpWindowMs: DEFAULT_CATCH_UP_WINDOW_MS });
  const { overlap } = policy;
  return {
    id,
    cron,
    timeZone,
    handler: input.handler,
    data: canonicalData(id, input.data),
    paused,
    semaphore: validateScheduleSemaphore(id, input.semaphore),
    permits,
    durationMs: duration(id, 'duration', input.duration),
    groupPattern: validatePattern(id, 'groupPattern', input.groupPattern),
    acquirerPattern: validatePattern(id, 'acquirerPattern', input.acquirerPattern),
    missedRuns: policy.missedRuns,
    ...(policy.missedRuns === 'runOnce' && { catchUpWindowMs: policy.catchUpWindowMs }),
    overlap,
    ...(overlap === 'replace' && { replaceWaitMs: policy.replaceWaitMs }),
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
  };
}

/** The expression with its fields separated by single spaces, when it has 5 or 6 of them. */
function validateCronShape(id: string, cron: unknown): string {
  if (typeof cron !== 'string' || cron.trim() === '') {
    throw new InvalidScheduleError(id, 'cron', `must be a cron expression (a string of 5 or 6 fields), got ${show(cron)}`);
  }
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new InvalidScheduleError(id, 'cron', `'${cron}' has ${fields.length} field${fields.length === 1 ? '' : 's'}; a cron expression has 5 (minute first) or 6 (second first)`);
  }
  return fields.join(' ');
}

function checkCron(validateCron: CronValidator | undefined, cron: string, timeZone: string): string | undefined {
  if (!validateCron) return undefined;
  try {
    return validateCron(cron, timeZone);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function validateTimeZone(id: string, timeZone: unknown): string {
  if (timeZone === undefined) return 'UTC';
  if (typeof timeZone !== 'string' || timeZone.trim() === '') {
    throw new InvalidScheduleError(id, 'timeZone', `must be an IANA time zone such as 'Europe/Berlin', got ${show(timeZone)}`);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new InvalidScheduleError(id, 'timeZone', `'${timeZone}' is not an IANA time zone this runtime knows (e.g. 'UTC', 'Europe/Berlin')`);
  }
  return timeZone;
}

function validateScheduleSemaphore(id: string, semaphore: unknown): string {
  if (semaphore === undefined) return `${SCHEDULE_SEMAPHORE_PREFIX}${id}`;
  try {
    validateSemaphoreName(semaphore);
  } catch (error) {
    if (error instanceof InvalidDefinitionError) throw new InvalidScheduleError(id, 'semaphore', error.reason);
    throw error;
  }
  const name = semaphore as string;
  if (name.startsWith(ELECTION_SEMAPHORE_PREFIX)) {
    throw new InvalidScheduleError(id, 'semaphore', `'${name}' belongs to a leader election (names starting '${ELECTION_SEMAPHORE_PREFIX}'); give the schedule its own`);
  }
  return name;
}

function validatePattern(id: string, field: string, pattern: unknown): string {
  if (pattern === undefined) return '.*';
  if (typeof pattern !== 'string' || pattern === '') throw new InvalidScheduleError(id, field, `must be a non-empty regex string, got ${show(pattern)}`);
  const error = patternError(pattern);
  if (error) throw new InvalidScheduleError(id, field, `'${pattern}' is not a valid regex: ${error}`);
  return pattern;
}

function duration(id: string, field: string, value: DurationInput | undefined): number {
  try {
    return parseDuration(value, id, field);
  } catch (error) {
    if (error instanceof InvalidDefinitionError) throw new InvalidScheduleError(id, field, error.reason);
    throw error;
  }
}


function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
}
