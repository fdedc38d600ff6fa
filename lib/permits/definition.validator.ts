import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { parseDuration } from '../core/duration';
import { patternError } from '../core/pattern';
import {
  MAX_SEMAPHORE_NAME_LENGTH,
  type SemaphoreDefinition,
  type SemaphoreDefinitionInput,
} from './semaphore-definition';

const KNOWN_FIELDS = new Set(['name', 'permits', 'duration', 'groupPattern', 'acquirerPattern']);

/**
 * Names that start with this back leader elections: such a semaphore takes at most one permit (0 pauses the
 * election), whoever edits it, so no edit can ever make two leaders.
 */
export const ELECTION_SEMAPHORE_PREFIX = 'election:';

/** Checks a semaphore name, throwing {@link InvalidDefinitionError} on `name` when it is empty, too long or not a string. */
export function validateSemaphoreName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new InvalidDefinitionError('<unnamed>', 'name', `must be a non-empty string, got ${JSON.stringify(name)}`);
  }
  if (name.length > MAX_SEMAPHORE_NAME_LENGTH) {
    throw new InvalidDefinitionError(
      `${name.slice(0, 40)}…`,
      'name',
      `must be at most ${MAX_SEMAPHORE_NAME_LENGTH} characters, got ${name.length}`,
    );
  }
  return name;
}

/**
 * Validates a definition as users write it and returns the stored form.
 * Throws {@link InvalidDefinitionError} naming the semaphore and the first bad field.
 */
export function validateDefinition(input: SemaphoreDefinitionInput): SemaphoreDefinition {
  if (input === null || typeof input !== 'object') {
    throw new InvalidDefinitionError('<unnamed>', 'definition', `must be an object, got ${String(input)}`);
  }
  const name = validateSemaphoreName(input.name);
  for (const key of Object.keys(input)) {
    if (!KNOWN_FIELDS.has(key)) {
      throw new InvalidDefinitionError(name, key, `is not a definition field (expected one of ${[...KNOWN_FIELDS].join(', ')})`);
    }
  }
  const permits = input.permits ?? 1;
  if (typeof permits !== 'number' || !Number.isSafeInteger(permits) || permits < 0) {
    throw new InvalidDefinitionError(name, 'permits', `must be a whole number, 0 or more, got ${JSON.stringify(permits)}`);
  }
  if (permits > 1 && name.startsWith(ELECTION_SEMAPHORE_PREFIX)) {
    throw new InvalidDefinitionError(name, 'permits', `must be 0 (paused) or 1: it backs a leader election, which has one leader at most, got ${permits}`);
  }
  const durationMs = parseDuration(input.duration, name, 'duration');
  const groupPattern = validatePattern(name, 'groupPattern', input.groupPattern);
  const acquirerPattern = validatePattern(name, 'acquirerPattern', input.acquirerPattern);
  return { name, permits, durationMs, groupPattern, acquirerPattern };
}

function validatePattern(name: string, field: string, pattern: unknown): string {
  if (pattern === undefined) return '.*';
  if (typeof pattern !== 'string' || pattern === '') {
    throw new InvalidDefinitionError(name, field, `must be a non-empty regex string, got ${JSON.stringify(pattern)}`);
  }
  const error = patternError(pattern);
  if (error) throw new InvalidDefinitionError(name, field, `'${pattern}' is not a valid regex: ${error}`);
  return pattern;
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
