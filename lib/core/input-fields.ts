import { z } from 'zod';
import { formatDuration, parseDuration, type DurationInput } from './duration';
import { withReason } from './input-schema';
import { patternError } from './pattern';
import { InvalidInputError } from './errors/invalid-input.error';

/*
 * Schemas of single values as operators send them: text from a query string or a command line, or JSON from a body.
 * Each carries the message an operator reads; `parseInput` names the field.
 */

/** Digits only: a whole number written as text (no sign, no spaces, no exponent). */
export const WHOLE_NUMBER_TEXT = /^\d+$/;

/** `schema`, or `undefined` when the value is absent or empty text (`?limit=`, `--limit ''`): left out. */
export function omittable<S extends z.ZodType>(schema: S) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

/**
 * A whole number from `min` to `max` (no upper bound without one), as JSON (`5`) or as text of digits (`'5'`); every
 * failure reads `reason(the value as given)`.
 */
export function wholeNumberInput({ min, max }: { min: number; max?: number }, reason: (given: unknown) => string): z.ZodType<number> {
  const inRange = max === undefined ? z.int().min(min) : z.int().min(min).max(max);
  return withReason(z.union([z.number(), z.string().regex(WHOLE_NUMBER_TEXT).transform(Number)]).pipe(inRange), reason);
}

/** `true` or `false`, as JSON or as text (`?force=true`); anything else reads `must be true or false, got …`. */
export const trueOrFalseInput = z
  .literal([true, 'true', false, 'false'], { error: (issue) => `must be true or false, got ${JSON.stringify(issue.input)}` })
  .transform((value) => value === true || value === 'true');

/**
 * A duration (`30000`, `'30s'`) read by {@link parseDuration} into whole milliseconds, its reason kept; with `max`,
 * a longer one reads `must be at most 5m, got "1h"`.
 */
export function durationInput({ allowZero = false, max }: { allowZero?: boolean; max?: number } = {}): z.ZodType<number> {
  return z.unknown().transform((given, context) => {
    let ms: number;
    try {
      ms = parseDuration(given as DurationInput, undefined, 'duration', { allowZero });
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      context.addIssue({ code: 'custom', message: error.reason, input: given });
      return z.NEVER;
    }
    if (max !== undefined && ms > max) {
      context.addIssue({ code: 'custom', message: `must be at most ${formatDuration(max)}, got ${JSON.stringify(given)}`, input: given });
      return z.NEVER;
    }
    return ms;
  });
}

/**
 * `schema` over `fallback` when the value is absent: `undefined` or `null`, as `value ?? fallback` reads it (a
 * definition's `permits: null` has always meant the default). The fallback is read like a given value, so it may be
 * written as users write it (`'30s'`).
 */
export function absentAs<S extends z.ZodType>(fallback: z.input<S>, schema: S) {
  return z.preprocess((given) => given ?? fallback, schema);
}

/**
 * A regex a definition's `groupPattern` or `acquirerPattern` takes (matched whole, see `fullMatch`): text that is
 * not empty and compiles. Anything else reads `must be a non-empty regex string, got ${shown(the value)}`; text that
 * does not compile reads `'prod(' is not a valid regex: …` with the engine's reason.
 */
export function regexInput(shown: (given: unknown) => string): z.ZodType<string> {
  const notRegex = ({ input }: { input: unknown }) => `must be a non-empty regex string, got ${shown(input)}`;
  return z
    .string({ error: notRegex })
    .min(1, { error: notRegex, abort: true })
    .superRefine((pattern, context) => {
      const error = patternError(pattern);
      if (error !== undefined) context.addIssue({ code: 'custom', message: `'${pattern}' is not a valid regex: ${error}`, input: pattern });
    });
}

/**
 * An object with no keys but `keys`, their values left for later checks (`unknown`): what refuses a misspelt key
 * (`timout`, `dryrun`) before anything else is read. `error` words a failure, as zod's own `error` option does.
 */
export function onlyKeys(keys: readonly string[], error: string | z.core.$ZodErrorMap<z.core.$ZodIssueUnrecognizedKeys | z.core.$ZodIssueInvalidType>) {
  return z.strictObject(Object.fromEntries(keys.map((key) => [key, z.unknown().optional()])), { error });
}
