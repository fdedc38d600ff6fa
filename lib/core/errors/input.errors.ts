import { InvalidInputError } from './invalid-input.error';

/**
 * A bad field of a semaphore definition (`semaphore` its name, `'<unnamed>'` when the name itself is missing) or,
 * with no semaphore, of another input: `scope` names it for the message (`'migration'` reads
 * `Invalid migration.toGroup: ...`).
 */
export function invalidDefinition(semaphore: string | undefined, field: string, reason: string, scope?: string): InvalidInputError {
  if (semaphore !== undefined) {
    return new InvalidInputError(`Semaphore "${semaphore}": invalid ${field}: ${reason}`, { of: `Semaphore "${semaphore}"`, field, reason, kind: 'semaphore', id: semaphore });
  }
  return new InvalidInputError(`Invalid ${scope ? `${scope}.` : ''}${field}: ${reason}`, { of: scope ?? 'input', field, reason });
}

/**
 * A bad field of a task's input (a submit, a handler's registration, a run's call): `task` its id, or its type where
 * no id is made yet. Reads `Task "mail:welcome-42": invalid priority: ...`.
 */
export function invalidTaskInput(task: string, field: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Task "${task}": invalid ${field}: ${reason}`, { of: `Task "${task}"`, field, reason, kind: 'task', id: task });
}

/** What a module option's error belongs to (its `of`). */
export const MODULE_OPTIONS = 'GatekeeperModule options';

/**
 * A bad module option (`GatekeeperModule.forRoot()` / `forRootAsync()`, a backend's options): `field` is its path, e.g.
 * `identity.group`, `definitions[2].duration`; `semaphore` the semaphore the option defines, when it defines one.
 * Printed as its one line.
 */
export function invalidOption(field: string, reason: string, semaphore?: string): InvalidInputError {
  return new InvalidInputError(`${MODULE_OPTIONS}: invalid ${field}: ${reason}`, {
    of: MODULE_OPTIONS, field, reason, ...(semaphore !== undefined && { kind: 'semaphore' as const, id: semaphore }), oneLine: true,
  });
}
