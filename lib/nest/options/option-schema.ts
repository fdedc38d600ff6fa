import { z } from 'zod';
import { onlyKeys } from '../../core/input-fields';
import { parseInput } from '../../core/input-schema';
import { invalidOption } from '../../core/errors/input.errors';

/*
 * The module options are checked with zod schemas, run through `parseInput`: a failure is an `InvalidInputError`
 * naming the option's path (`tasks.concurrency`, `admin.token`), its reason the schema's message. Checks that are not
 * about shape (a regex, a duration's text, one option against another, the environment) stay in the resolvers' code.
 */

/**
 * Runs `schema` over the option at `path` (`'tasks'`, `'elections[2]'`): answers its output, or throws
 * {@link InvalidInputError} naming `path` for the value itself and `path.field` for a field in it. Without `path`,
 * `value` is the module options themselves: the value is named `options` and its fields by their keys.
 */
export function parseOption<S extends z.ZodType>(schema: S, value: unknown, path?: string): z.output<S> {
  const toError = (field: string, reason: string) =>
    invalidOption(field === '' ? (path ?? 'options') : path === undefined ? field : `${path}.${field}`, reason);
  return parseInput(schema, value, toError, { field: '' });
}

/** How an {@link optionsObject} words what is wrong. */
export interface OptionsObjectMessages {
  /** The value is not an object. @default `must be an object, got <the value as text>` */
  readonly notObject?: (given: unknown) => string;
  /** `key` is not in the shape. @default {@link notAnOption} of the shape's keys */
  readonly unknownKey?: (key: string) => string;
  /**
   * Whether an array is read as an object of its indexes (`[]`: no option given; `['x']`: the unknown key `0`), as
   * the checks by `Object.keys` always read one. @default false: an array is not an object.
   */
  readonly lists?: boolean;
}

/**
 * An object of options with the fields of `shape`: the object and its keys are checked first (a misspelt key is what
 * to name, not what its absence left at the default), then the fields, in the shape's order. A field is read as
 * `value.field` reads it, so an instance of a class with getters works too.
 */
export function optionsObject<T extends z.core.$ZodLooseShape>(shape: T, messages: OptionsObjectMessages = {}) {
  const known = Object.keys(shape);
  const { notObject = (given: unknown) => `must be an object, got ${String(given)}`, unknownKey = notAnOption(known), lists = false } = messages;
  const keys = onlyKeys(known, (issue) => (issue.code === 'unrecognized_keys' ? unknownKey(issue.keys[0]) : notObject(issue.input)));
  const indexes = (given: unknown) => (lists && Array.isArray(given) ? { ...given } : given);
  return z.preprocess(indexes, keys).pipe(z.object(shape));
}

/** `is not an option (expected one of …)`, listing `keys` (in the order the option's interface has them). */
export function notAnOption(keys: readonly string[]): (key: string) => string {
  return () => `is not an option (expected one of ${keys.join(', ')})`;
}

/**
 * An {@link optionsObject} that checks only that the value is an object and that its keys are among `keys` (their
 * values are read later, where the order of the checks puts them); answers a plain object of the known keys.
 */
export function optionKeys(keys: readonly string[], messages: OptionsObjectMessages = {}) {
  return optionsObject(Object.fromEntries(keys.map((key) => [key, z.unknown().optional()])), messages);
}
