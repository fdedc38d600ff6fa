import { z } from 'zod';
import { formatDuration } from '../core/duration';
import { absentAs, durationInput, regexInput } from '../core/input-fields';
import { parseInput, withReason, type InputErrorFactory } from '../core/input-schema';
import { nameInput, shownName } from '../core/names';
import {
  MAX_SEMAPHORE_NAME_LENGTH,
  type SemaphoreDefinition,
  type SemaphoreDefinitionInput,
} from './semaphore-definition';
import { invalidDefinition } from '../core/errors/input.errors';

/**
 * Names that start with this back leader elections: such a semaphore takes at most one permit (0 pauses the
 * election), whoever edits it, so no edit can ever make two leaders.
 */
export const ELECTION_SEMAPHORE_PREFIX = 'election:';

/**
 * A semaphore's name: a name (lib/core/names: text, not blank, no control character, no lone surrogate) of at most
 * {@link MAX_SEMAPHORE_NAME_LENGTH} characters.
 */
export const SEMAPHORE_NAME = nameInput({ max: MAX_SEMAPHORE_NAME_LENGTH });

/**
 * The semaphore an error names, for a bad `name`: `'<unnamed>'` when it is no name at all, else the name as errors
 * show one (escaped, its first 40 characters).
 */
const namingSemaphore = (name: unknown): InputErrorFactory => (field, reason) =>
  invalidDefinition(typeof name === 'string' && name.trim() !== '' ? shownName(name) : '<unnamed>', field, reason);

/** What a definition is before its name is read: an object (not `null`, not an array). */
const DEFINITION_OBJECT = z.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
  error: ({ input }) => `must be an object, got ${Array.isArray(input) ? 'an array' : String(input)}`,
});

/** Permits of any semaphore: a whole number, 0 (paused) or more; absent (or `null`): 1. */
const PERMITS = absentAs(1, withReason(z.int().min(0), (given) => `must be a whole number, 0 or more, got ${JSON.stringify(given)}`));

/** Permits of an election's semaphore: 0 (paused) or 1, whoever edits it. */
const ELECTION_PERMITS = PERMITS.refine((permits) => permits <= 1, {
  error: ({ input }) => `must be 0 (paused) or 1: it backs a leader election, which has one leader at most, got ${String(input)}`,
});

const PATTERN = regexInput((given) => JSON.stringify(given)).default('.*');

/**
 * A definition's fields after its name, each checked in this order; the first bad one is the error. Any other key
 * is refused first (a misspelt `permit` must not leave the default of `permits` in place silently).
 */
function definitionSchema(permits: z.ZodType<number>) {
  const shape = { name: z.string(), permits, duration: durationInput(), groupPattern: PATTERN, acquirerPattern: PATTERN };
  return z.strictObject(shape, { error: `is not a definition field (expected one of ${Object.keys(shape).join(', ')})` });
}

/** A definition's fields (of any semaphore but an election's): what the `definitions` option and the admin edits take. */
export const DEFINITION = definitionSchema(PERMITS);
const ELECTION_DEFINITION = definitionSchema(ELECTION_PERMITS);

/**
 * Checks a semaphore name, throwing {@link InvalidInputError} on `name` when it is not a string, blank, too long,
 * or holds a control character or a lone surrogate.
 */
export function validateSemaphoreName(name: unknown): string {
  return parseInput(SEMAPHORE_NAME, name, namingSemaphore(name), { field: 'name' });
}

/**
 * Validates a definition as users write it and returns the stored form.
 * Throws {@link InvalidInputError} naming the semaphore and the first bad field.
 */
export function validateDefinition(input: SemaphoreDefinitionInput): SemaphoreDefinition {
  parseInput(DEFINITION_OBJECT, input, (field, reason) => invalidDefinition('<unnamed>', field, reason), { field: 'definition' });
  // The name first: every later error names the semaphore, and an election's takes at most one permit.
  const name = validateSemaphoreName(input.name);
  const schema = name.startsWith(ELECTION_SEMAPHORE_PREFIX) ? ELECTION_DEFINITION : DEFINITION;
  const { permits, duration: durationMs, groupPattern, acquirerPattern } = parseInput(schema, input, (field, reason) => invalidDefinition(name, field, reason));
  return { name, permits, durationMs, groupPattern, acquirerPattern };
}

/** Turns a stored definition back into the input form (duration in ms), e.g. to apply a partial update. */
export function toDefinitionInput(definition: SemaphoreDefinition): SemaphoreDefinitionInput {
  return {
    name: definition.name,
    permits: definition.permits,
    duration: definition.durationMs,
    groupPattern: definition.groupPattern,
    acquirerPattern: definition.acquirerPattern,
  };
}

/** The shortest tick of the jobs a node runs on a semaphore in hold mode (they keep the permit from tick to tick). */
export interface HeldTick {
  /** The job (`Class.method`, or a runtime schedule's id). */
  readonly job: string;
  /** The shortest time between two of its ticks, in ms. */
  readonly tickMs: number;
}

/**
 * Refuses, unless `force`, an operator's edit that makes a duration shorter than the tick of a job that keeps the
 * permit from tick to tick (`mode: 'hold'`, the duration outlasting the tick now): the permit would lapse between
 * ticks and the job would move from node to node (`--duration 90` on a 10-second job is 90 ms). A new definition, or
 * a duration already shorter than the tick (a daily job with a 10-minute permit), is the user's design: not checked.
 */
export function checkDurationOverTick(
  definition: SemaphoreDefinition, currentMs: number | undefined, tick: HeldTick | undefined, { force = false }: { force?: boolean } = {},
): void {
  if (force || tick === undefined || definition.durationMs >= tick.tickMs || currentMs === undefined || currentMs < tick.tickMs) return;
  throw invalidDefinition(definition.name, 'duration',
    `${formatDuration(definition.durationMs)} is shorter than the tick of ${tick.job} (every ${formatDuration(tick.tickMs)}), which keeps its `
    + "permit from tick to tick: it would lapse between ticks and the job would move between nodes. Give one longer than the tick (a bare "
    + "number is milliseconds), or force it");
}

/**
 * Refuses, unless `force`, an operator's definition whose duration is not more than twice the clock-skew bound: a
 * running job's lease would vouch for its permit only briefly or not at all (a bare `--duration 90` is 90 ms, where
 * 90 s was meant). Start-up only warns of such a duration in the module's options; an edit is refused naming the field.
 */
export function checkDurationOverSkew(definition: SemaphoreDefinition, skewMs: number, { force = false }: { force?: boolean } = {}): void {
  const problem = force ? undefined : durationOverSkewProblem(definition.durationMs, skewMs);
  if (problem) throw invalidDefinition(definition.name, 'duration', problem);
}

/**
 * Why a permit duration of `durationMs` is too short for the clock-skew bound `skewMs` (not more than twice it), or
 * `undefined`: the one rule for a semaphore's duration and a runtime schedule's, which defines its semaphore.
 */
export function durationOverSkewProblem(durationMs: number, skewMs: number): string | undefined {
  if (skewMs <= 0 || durationMs > 2 * skewMs) return undefined;
  return `${formatDuration(durationMs)} is not more than twice maxClockSkew (${formatDuration(skewMs)}): a running job's lease could vouch `
    + "for its permit only briefly or not at all. Give a longer one (a bare number is milliseconds: '90s' is 90 seconds), or force it";
}
