import { CorruptStateError } from './errors/corrupt-state.error';

/** Parses a stored value that must be a JSON object, throwing {@link CorruptStateError} naming `key` otherwise. */
export function parseJsonObject(key: string, raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'string') throw new CorruptStateError(key, `expected a JSON string, found ${typeof raw}`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new CorruptStateError(key, `not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CorruptStateError(key, 'not a JSON object');
  return value as Record<string, unknown>;
}
