import assert from 'node:assert/strict';

/**
 * `actual` deep-equals `expected` as a record is compared (Jest's `toEqual`): a property holding `undefined` counts as
 * absent, and an object as its own fields whatever its class. A value decoded from the store has no `undefined`
 * fields; the record it was encoded from may.
 */
export function assertEqual(actual: unknown, expected: unknown, message?: string): void {
  assert.deepStrictEqual(comparable(actual), comparable(expected), message);
}

/** Every property `expected` names holds in `actual`, recursively; the others are not looked at (Jest's `toMatchObject`). */
export function assertMatch(actual: unknown, expected: object, message?: string): void {
  assert.deepStrictEqual(comparable(picked(actual, expected)), comparable(expected), message);
}

/** `value` has no property `key`, not even one holding `undefined` (Jest's `not.toHaveProperty`). */
export function assertNoProperty(value: object, key: string, message?: string): void {
  assert.ok(!(key in value), message ?? `unexpected property "${key}": ${JSON.stringify(value)}`);
}

/** `value` with every `undefined` property left out and every object made a plain one, recursively. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value instanceof Map) return new Map([...value].map(([key, item]) => [key, comparable(item)]));
  if (value === null || typeof value !== 'object' || value instanceof Set || value instanceof Date || value instanceof RegExp || value instanceof Error) return value;
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined).map(([key, item]) => [key, comparable(item)]));
}

/** The part of `actual` that `expected` names: its properties (recursively), and arrays element by element. */
function picked(actual: unknown, expected: unknown): unknown {
  if (Array.isArray(expected)) return Array.isArray(actual) ? actual.map((item, i) => (i < expected.length ? picked(item, expected[i]) : item)) : actual;
  if (expected === null || typeof expected !== 'object' || actual === null || typeof actual !== 'object') return actual;
  if (expected instanceof Map || expected instanceof Set || expected instanceof Date || expected instanceof RegExp) return actual;
  const fields = actual as Record<string, unknown>;
  return Object.fromEntries(Object.keys(expected).filter((key) => key in fields).map((key) => [key, picked(fields[key], (expected as Record<string, unknown>)[key])]));
}
