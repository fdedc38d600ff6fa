import { HazelcastJsonValue } from '../hazelcast-client.load';
import { CorruptStateError } from '../../../core/errors/corrupt-state.error';
import { parseJsonObject } from '../../../core/json-object';
import type { TaskRecord } from '../../../store/tasks/task';
import { decodeTaskObject } from '../../../store/tasks/task.codec';

/** Told of a stored value that cannot be read: its key (or `'?'`) and why. */
export type CorruptValueReport = (key: string, message: string) => void;

/**
 * A stored value as the object its JSON holds, parsed once. A client whose serialization config parses JSON values
 * eagerly (the Node client's default) hands the object over already; written by JSON.stringify of plain data, it
 * turns back into the same string, so a compare-and-set against that string matches the stored bytes.
 */
export function objectOf(key: string, value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return parseJsonObject(key, value);
  if (value instanceof HazelcastJsonValue) return parseJsonObject(key, value.toString());
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CorruptStateError(key, 'not a JSON object');
  return value as Record<string, unknown>;
}

/**
 * The tasks among values a query returned, each with its stored object; a value that cannot be read is reported and
 * left out (one bad record must not stop every claim).
 */
export function decodeStoredTasks(values: unknown[], corrupt: CorruptValueReport): Array<{ task: TaskRecord; stored: Record<string, unknown> }> {
  return values.flatMap((value) => {
    let id = '?';
    try {
      const stored = objectOf(id, value);
      id = typeof stored.id === 'string' ? stored.id : '?';
      return [{ task: decodeTaskObject(id, stored), stored }];
    } catch (error) {
      corrupt(id, error instanceof CorruptStateError ? error.message : String(error));
      return [];
    }
  });
}
