import { z } from 'zod';
import { withReason } from '../../core/input-schema';

/*
 * Schemas of single module options, each with the message users read; `parseOption` names the option. Options are
 * written in code, so a boolean is a boolean and a number a number: no text is read as one (unlike operators' input).
 * Durations are `durationInput` (lib/core/input-fields), which words a bad one as `parseDuration` does; names are
 * `nameInput` (lib/core/names), the one rule for every name.
 */

/** `true` or `false`; anything else reads `must be true or false, got …`. */
export const trueOrFalseOption = z.boolean({ error: ({ input }) => `must be true or false, got ${JSON.stringify(input)}` });

/** A whole number from `min` (to `max`, when given); anything else reads `must be a whole number, 1 or more, got …` (or `from 1 to 1000`). */
export function wholeNumberOption({ min, max }: { min: number; max?: number }): z.ZodType<number> {
  const range = max === undefined ? `, ${min} or more` : ` from ${min} to ${max}`;
  return withReason(max === undefined ? z.int().min(min) : z.int().min(min).max(max), (given) => `must be a whole number${range}, got ${JSON.stringify(given)}`);
}

/** `false` (off, read as 0) or what `schema` reads; anything else fails with `schema`'s reason. */
export function offOr(schema: z.ZodType<number>): z.ZodType<number> {
  return z.union([z.literal(false).transform(() => 0), schema], {
    // `false` is the one value the first branch takes: what is wrong is what the second says.
    error: (issue) => (issue.code === 'invalid_union' ? issue.errors[1]?.[0]?.message : undefined),
  });
}

/** An object with the method `method` (a store of the library's contract, e.g. `claimable`); anything else reads `message`. */
export function objectWithMethod<T extends object>(method: keyof T & string, message: string) {
  return z.custom<T>((given) => typeof given === 'object' && given !== null && typeof (given as Record<string, unknown>)[method] === 'function', message);
}

/**
 * An object (not a list) handed on as given, its fields checked where it is used (a client's config, a backend's
 * connection options); anything else reads `must be <what>, got …`.
 */
export function passThroughObject<T extends object>(what: string) {
  return z.custom<T>((given) => given !== null && typeof given === 'object' && !Array.isArray(given), {
    error: ({ input }) => `must be ${what}, got ${JSON.stringify(input)}`,
  });
}
