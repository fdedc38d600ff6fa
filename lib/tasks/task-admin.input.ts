import { parseDuration } from '../core/duration';
import type { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { FINISHED_STATES, type TaskState } from './task';
import { InvalidTaskQueryError } from './errors/invalid-task-query.error';
import type { TaskPurgeOptions } from './task-admin';
import type { TaskQuery } from './task-store';

/*
 * Operators' requests on tasks as they arrive, as text (a query string, a JSON body, a command line): validated
 * here, once, for the admin API and the CLI alike, into what `TaskAdmin` takes; a bad field is named in the error.
 */

const STATES: readonly TaskState[] = ['pending', 'running', 'done', 'failed', 'invalid', 'cancelled'];

/** What an operator's listing asks for, as text (query string, command line): validated into a query and a limit. */
export interface TaskListInput {
  /** Types, comma-separated or a list. */
  readonly types?: string | readonly string[];
  /** States, comma-separated or a list. */
  readonly states?: string | readonly string[];
  readonly group?: string;
  readonly limit?: string | number;
}

/** Validates an operator's listing; throws {@link InvalidTaskQueryError} naming the field. */
export function parseTaskList(input: TaskListInput): { query: TaskQuery; limit: number } {
  const list = (field: string, value: unknown): string[] | undefined => {
    if (value === undefined) return undefined;
    // Input comes from JSON bodies too: anything but text or a list of text is the caller's error, not a 500.
    if (typeof value !== 'string' && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
      throw new InvalidTaskQueryError(field, `must be comma-separated text or a list of strings, got ${JSON.stringify(value)}`);
    }
    return (typeof value === 'string' ? value.split(',') : value).map((v) => v.trim()).filter(Boolean);
  };
  const types = list('type', input.types);
  const states = list('state', input.states);
  for (const state of states ?? []) {
    if (!(STATES as readonly string[]).includes(state)) throw new InvalidTaskQueryError('state', `"${state}" is not a task state (one of ${STATES.join(', ')})`);
  }
  const limit = input.limit === undefined || input.limit === '' ? 100 : Number(input.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new InvalidTaskQueryError('limit', `must be a whole number from 1 to 10000, got ${JSON.stringify(input.limit)}`);
  if (input.group !== undefined && (typeof input.group !== 'string' || input.group.trim() === '')) throw new InvalidTaskQueryError('group', 'must be a group name');
  return {
    query: { ...(types?.length && { types }), ...(states?.length && { states: states as TaskState[] }), ...(input.group !== undefined && { group: input.group }) },
    limit,
  };
}

/** What an operator's purge asks for, as text: validated into {@link TaskPurgeOptions}. */
export interface TaskPurgeInput {
  readonly types?: string | readonly string[];
  /** Finished states only. */
  readonly states?: string | readonly string[];
  /** Only tasks finished at least this long ago: ms, or `'1h'`. */
  readonly olderThan?: string | number;
}

/** Validates an operator's purge; throws {@link InvalidTaskQueryError} naming the field. */
export function parseTaskPurge(input: TaskPurgeInput): TaskPurgeOptions {
  const { query } = parseTaskList({ types: input.types, states: input.states });
  for (const state of query.states ?? []) {
    if (!FINISHED_STATES.has(state)) throw new InvalidTaskQueryError('state', `"${state}" is not a finished state (one of ${[...FINISHED_STATES].join(', ')})`);
  }
  let olderThanMs = 0;
  if (input.olderThan !== undefined && input.olderThan !== '') {
    try {
      olderThanMs = parseDuration(/^\d+$/.test(String(input.olderThan)) ? Number(input.olderThan) : input.olderThan, '<task purge>', 'olderThan', { allowZero: true });
    } catch (error) {
      throw new InvalidTaskQueryError('olderThan', (error as InvalidDefinitionError).reason ?? String(error));
    }
  }
  return { ...(query.types && { types: query.types }), ...(query.states && { states: query.states }), olderThanMs };
}
