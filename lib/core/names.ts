import { z } from 'zod';

/*
 * The one rule for names: a semaphore's, a job's, a schedule's, a task's (type, name, group), an election's, an
 * allocation's and its resources', a node's group and acquirer. Each ends up as a store key or in one on every
 * backend, so each is checked here, once, before any store call:
 * - text, not blank;
 * - at most a length its kind gives (most: MAX_NAME_LENGTH), so a key with its prefix fits every backend's index;
 * - no control character (C0 with NUL, DEL, C1): a PostgreSQL text column holds no NUL, and no log, terminal or
 *   console shows the others faithfully;
 * - no lone surrogate: UTF-8 cannot carry one, so a backend would store U+FFFD, which is another name.
 * Anything else is a name on every backend: quotes, SQL and Lua fragments, any script, emoji (every backend takes
 * names as parameters, never as code).
 */

/** The most characters (UTF-16 code units, as `length` counts) a name may have, unless its kind says less. */
export const MAX_NAME_LENGTH = 200;

/** The most characters of a node's `group` and `acquirer`: a DNS name (a pod's, a host's) fits. */
export const MAX_NODE_NAME_LENGTH = 253;

/** `U+0000`: a code unit as Unicode writes it. */
function codePoint(unit: number): string {
  return `U+${unit.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * `name` in double quotes, every control character and lone surrogate escaped (`"a\u0000b"`): JSON's escaping, which
 * leaves DEL and the C1 controls as they are, and those too. Safe to log and to answer.
 */
export function quotedName(name: string): string {
  return JSON.stringify(name).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What is wrong with the characters of `name`, or `undefined` when every one may be in a name: the first control
 * character or lone surrogate, with where it is. The message shows the name escaped (`"a\u0000b"`), so it is safe to
 * log and to answer.
 */
export function nameCharacterProblem(name: string): string | undefined {
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (unit <= 0x1f || (unit >= 0x7f && unit <= 0x9f)) {
      return `must not contain control characters (${codePoint(unit)} at index ${i}), got ${quotedName(name)}`;
    }
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = name.charCodeAt(i + 1);
      if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `must be well-formed Unicode text (a lone surrogate ${codePoint(unit)} at index ${i}), got ${quotedName(name)}`;
    }
  }
  return undefined;
}

/** How many characters of a name an error message shows before `…`. */
const SHOWN_LENGTH = 40;

/**
 * `name` as an error may name its owner (`Semaphore "…": invalid …`): control characters and lone surrogates
 * escaped (see {@link quotedName}), and cut to its first 40 characters with `…` when longer.
 */
export function shownName(name: string): string {
  const escaped = quotedName(name).slice(1, -1);
  return escaped.length > SHOWN_LENGTH ? `${escaped.slice(0, SHOWN_LENGTH)}…` : escaped;
}

/** How a name's failures read; `what` words the expected value (`a non-empty string`, `a group name`). */
export interface NameInputOptions {
  /** The most characters. @default MAX_NAME_LENGTH */
  readonly max?: number;
  /** What a value that is no text, or blank text, must be instead: `must be ${what}, got …`. @default 'a non-empty string' */
  readonly what?: string;
}

/**
 * A name: text, not blank, at most `max` characters, no control character, no lone surrogate (see above). Every
 * failure reads the library's way: `must be a non-empty string, got 5`, `must be at most 200 characters, got 1024`,
 * `must not contain control characters (U+0000 at index 1), got "a\u0000b"`.
 */
export function nameInput({ max = MAX_NAME_LENGTH, what = 'a non-empty string' }: NameInputOptions = {}): z.ZodType<string, string> {
  const notName = ({ input }: { input: unknown }) => `must be ${what}, got ${JSON.stringify(input) ?? String(input)}`;
  return z
    .string({ error: notName })
    .refine((name) => name.trim() !== '', { error: notName, abort: true })
    .max(max, { error: ({ input }) => `must be at most ${max} characters, got ${(input as string).length}`, abort: true })
    .superRefine((name, context) => {
      const problem = nameCharacterProblem(name);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem, input: name });
    });
}

/** The schemas {@link nameProblem} words a bad name's reason with, by `max` and `what`: built once each. */
const NAME_SCHEMAS = new Map<string, z.ZodType<string, string>>();

/**
 * What is wrong with `value` as a name (the reason {@link nameInput} gives), or `undefined` for a good one: for
 * checks that throw an error of their own (a decorator's, a task id's). A good name is told by the rule itself, with
 * no schema and nothing allocated (it runs on every submit and every fence); a bad one's reason comes from the schema.
 */
export function nameProblem(value: unknown, options: NameInputOptions = {}): string | undefined {
  const max = options.max ?? MAX_NAME_LENGTH;
  // \S: anything but what trim() removes.
  if (typeof value === 'string' && value.length <= max && /\S/.test(value) && nameCharacterProblem(value) === undefined) return undefined;
  const key = `${max}\u0000${options.what ?? ''}`;
  let schema = NAME_SCHEMAS.get(key);
  if (!schema) NAME_SCHEMAS.set(key, (schema = nameInput(options)));
  const result = schema.safeParse(value);
  return result.success ? undefined : result.error.issues[0].message;
}
