import { z } from 'zod';
import { durationInput, omittable, WHOLE_NUMBER_TEXT } from '../core/input-fields';
import { parseInput, withReason, type InputErrorFactory } from '../core/input-schema';
import { nameInput } from '../core/names';
import { FINISHED_STATES, type TaskState } from '../store/tasks/task';
import { MAX_TASK_NAME_LENGTH, taskIdPartProblem } from './task-id.rules';
import type { TaskQuery } from '../store/tasks/task-store';
import { invalidTaskQuery } from './errors/task.errors';

/*
 * Operators' requests on tasks as they arrive, as text (a query string, a JSON body, a command line): validated
 * here, once, for the admin API and the CLI alike, into what `TaskAdmin` takes; a bad field is named in the error.
 */

const STATES = ['pending', 'running', 'done', 'failed', 'invalid', 'cancelled'] as const satisfies readonly TaskState[];
const FINISHED = [...FINISHED_STATES];

/** Names, comma-separated or a list (input comes from JSON bodies too), trimmed, empty ones left out. */
const NAMES = z
  .union([z.string().transform((text) => text.split(',')), z.array(z.string())], {
    error: ({ input }) => `must be comma-separated text or a list of strings, got ${JSON.stringify(input)}`,
  })
  .transform((names) => names.map((name) => name.trim()).filter(Boolean));

/**
 * The most characters of a task id an operator asks for: a type and a name, or a join's
 * `<type>#group-finished:parent:<name>`.
 */
export const MAX_TASK_ID_LENGTH = 500;

const TASK_ID = nameInput({ max: MAX_TASK_ID_LENGTH });

/** Task types to filter by: each a name (lib/core/names), as a task's type is. */
const TASK_TYPES = NAMES.pipe(z.array(nameInput({ max: MAX_TASK_NAME_LENGTH })));

const TASK_STATES = NAMES.pipe(z.array(z.enum(STATES, { error: ({ input }) => `"${String(input)}" is not a task state (one of ${STATES.join(', ')})` })));

const TASK_LIST = z.object({
  type: TASK_TYPES.optional(),
  state: TASK_STATES.optional(),
  limit: omittable(withReason(z.coerce.number().int().min(1).max(10_000), (given) => `must be a whole number from 1 to 10000, got ${JSON.stringify(given)}`)),
  group: nameInput({ max: MAX_TASK_NAME_LENGTH, what: 'a group name' }).optional(),
});

const TASK_PURGE = z.object({
  type: TASK_TYPES.optional(),
  state: TASK_STATES.pipe(z.array(z.enum(FINISHED, { error: ({ input }) => `"${String(input)}" is not a finished state (one of ${FINISHED.join(', ')})` }))).optional(),
  // Digits (and what reads as digits) are milliseconds, as they always were.
  olderThan: omittable(z.preprocess((given) => (WHOLE_NUMBER_TEXT.test(String(given)) ? Number(given) : given), durationInput({ allowZero: true }))),
});

// The schemas are keyed by the names operators use (`?type=`, `--state`), so the errors name those.
const taskQueryError: InputErrorFactory = (field, reason) => invalidTaskQuery(field, reason);

/** What an operator's listing asks for, as text (query string, command line): validated into a query and a limit. */
export interface TaskListInput {
  /** Types, comma-separated or a list. */
  readonly types?: string | readonly string[];
  /** States, comma-separated or a list. */
  readonly states?: string | readonly string[];
  readonly group?: string;
  readonly limit?: string | number;
}

/** Validates an operator's listing; throws {@link InvalidInputError} naming the field. */
export function parseTaskList(input: TaskListInput): { query: TaskQuery; limit: number } {
  const { type: types, state: states, limit = 100, group } = parseInput(
    TASK_LIST, { type: input.types, state: input.states, limit: input.limit, group: input.group }, taskQueryError,
  );
  return {
    query: { ...(types?.length && { types }), ...(states?.length && { states }), ...(group !== undefined && { group }) },
    limit,
  };
}

/** What an operator's purge removes. */
export interface TaskPurgeOptions {
  /** Only these types. */
  readonly types?: readonly string[];
  /** Only these finished states (default: all of them). */
  readonly states?: readonly TaskState[];
  /** Only tasks that finished at least this long ago (ms). Default 0: every finished task. */
  readonly olderThanMs?: number;
}

/** What an operator's purge asks for, as text: validated into {@link TaskPurgeOptions}. */
export interface TaskPurgeInput {
  readonly types?: string | readonly string[];
  /** Finished states only. */
  readonly states?: string | readonly string[];
  /** Only tasks finished at least this long ago: ms, or `'1h'`. */
  readonly olderThan?: string | number;
}

/** Validates an operator's purge; throws {@link InvalidInputError} naming the field. */
export function parseTaskPurge(input: TaskPurgeInput): TaskPurgeOptions {
  const { type: types, state: states, olderThan: olderThanMs = 0 } = parseInput(
    TASK_PURGE, { type: input.types, state: input.states, olderThan: input.olderThan }, taskQueryError,
  );
  return { ...(types?.length && { types }), ...(states?.length && { states }), olderThanMs };
}

/**
 * A task's id as an operator gives it (a path, a command line, a service call): a name (lib/core/names) of at most
 * {@link MAX_TASK_ID_LENGTH} characters, checked before anything is read; throws {@link InvalidInputError} on `id`.
 */
export function validateTaskId(id: unknown): string {
  return parseInput(TASK_ID, id, taskQueryError, { field: 'id' });
}

/** A group asked for by its task type and name: each as a task's id has it; throws {@link InvalidInputError} on `type` or `name`. */
export function validateTaskGroup(type: unknown, name: unknown): { type: string; name: string } {
  for (const [field, value] of [['type', type], ['name', name]] as const) {
    const problem = taskIdPartProblem(value);
    if (problem !== undefined) throw invalidTaskQuery(field, problem);
  }
  return { type: type as string, name: name as string };
}

/**
 * The names of a query given in code (`TaskService.list`, `purge`): each type and the group a name as a task's are;
 * throws {@link InvalidInputError} on `type` or `group` before anything is read.
 */
export function validateTaskQueryNames(query: { readonly types?: readonly string[]; readonly group?: string }): void {
  query.types?.forEach((type) => parseInput(nameInput({ max: MAX_TASK_NAME_LENGTH }), type, taskQueryError, { field: 'type' }));
  if (query.group !== undefined) parseInput(nameInput({ max: MAX_TASK_NAME_LENGTH, what: 'a group name' }), query.group, taskQueryError, { field: 'group' });
}
