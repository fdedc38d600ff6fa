import { z } from 'zod';

/*
 * Operators' input (a query string, a JSON body, a command line) is checked with zod schemas; this turns a schema's
 * failure into the library's own error, so each caller keeps its error class and every message names the field.
 */

/** Builds the caller's error for a bad `field` (a key, or a dotted path into the input) and what is wrong with it. */
export type InputErrorFactory = (field: string, reason: string) => Error;

/** How {@link parseInput} names what it checks. */
export interface ParseInputOptions {
  /** The name of the value itself, for a failure of the whole value (not an object, not a number). @default 'body' */
  readonly field?: string;
}

/**
 * Runs `schema` over `value`: answers its output, or throws `toError(field, reason)` for its first issue. The field
 * is the issue's path (dotted; an item of a list is named by its list), the first unknown key of a strict object,
 * or `options.field` for the value itself; the reason is the issue's message, so schemas carry our messages.
 * An unknown key wins over every other issue, as a hand check of the keys first would: a misspelt option
 * (`timout`) is the mistake to name, not what its absence left at the default.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, toError: InputErrorFactory, options: ParseInputOptions = {}): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { issues } = result.error;
  const issue = issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? issues[0];
  const path = issue.path.filter((key): key is string => typeof key === 'string');
  if (issue.code === 'unrecognized_keys') path.push(issue.keys[0]);
  throw toError(path.length > 0 ? path.join('.') : (options.field ?? 'body'), issue.message);
}

/**
 * `schema` with one message for every way it fails, written from the value as it was given (`got "0"`, not what a
 * coercion made of it): for a value whose every failure reads the same, such as "a whole number from 1 to 1000".
 */
export function withReason<S extends z.ZodType>(schema: S, reason: (given: unknown) => string): z.ZodType<z.output<S>> {
  return z.unknown().transform((given, context) => {
    const result = schema.safeParse(given);
    if (result.success) return result.data as z.output<S>;
    context.addIssue({ code: 'custom', message: reason(given), input: given });
    return z.NEVER;
  });
}
