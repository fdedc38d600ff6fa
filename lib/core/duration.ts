import ms from 'ms';
import { invalidDefinition } from './errors/input.errors';

/** A duration: milliseconds as a number, or a string such as `'30s'`, `'5m'`, `'1h'`, `'1.5h'`. */
export type DurationInput = number | string;

/**
 * Parses a duration (`1500`, `'30s'`, `'5m'`, `'1.5h'`) into whole milliseconds.
 * Throws {@link InvalidInputError} naming `owner` and `field` when it is not a positive, finite duration
 * (or a non-negative one with `allowZero`).
 */
export function parseDuration(
  value: DurationInput | undefined,
  owner: string | undefined,
  field: string,
  { allowZero = false }: { allowZero?: boolean } = {},
): number {
  const fail = (reason: string): never => {
    throw invalidDefinition(owner, field, reason);
  };
  let parsed: number | undefined;
  if (typeof value === 'number') {
    parsed = value;
  } else if (typeof value === 'string' && value.trim() !== '') {
    parsed = ms(value.trim() as ms.StringValue) as number | undefined;
  } else {
    return fail(`expected milliseconds or a string like '30s', got ${describe(value)}`);
  }
  if (parsed === undefined || !Number.isFinite(parsed)) {
    return fail(`cannot parse ${describe(value)} as a duration (use milliseconds or '500ms', '30s', '5m', '1h')`);
  }
  if (parsed < 0 || (parsed === 0 && !allowZero)) {
    return fail(`must be ${allowZero ? 'zero or more' : 'more than zero'}, got ${describe(value)}`);
  }
  return Math.ceil(parsed);
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** Units {@link formatDuration} writes, largest first; each is one `parseDuration` accepts. */
const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/**
 * Writes a duration in milliseconds the way a user writes it: in the largest unit that holds it exactly
 * (`6000` → `'6s'`, `90000` → `'90s'`, `3600000` → `'1h'`, `1500` → `'1500ms'`, `0` → `'0ms'`). Never lossy:
 * {@link parseDuration} reads every result back to the same number. A value that is not a whole number of
 * milliseconds is written as it is, in ms (`'0.5ms'`); a negative one gets a leading `-`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return `${String(ms)}ms`;
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms === 0 || !Number.isSafeInteger(ms)) return `${ms}ms`;
  for (const [unit, size] of UNITS) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
