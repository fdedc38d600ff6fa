import ms from 'ms';
import { InvalidDefinitionError } from '../errors/invalid-definition.error';
import type { DurationInput } from './semaphore-definition';

/**
 * Parses a duration (`1500`, `'30s'`, `'5m'`, `'1.5h'`) into whole milliseconds.
 * Throws {@link InvalidDefinitionError} naming `owner` and `field` when it is not a positive, finite duration
 * (or a non-negative one with `allowZero`).
 */
export function parseDuration(
  value: DurationInput | undefined,
  owner: string,
  field: string,
  { allowZero = false }: { allowZero?: boolean } = {},
): number {
  const fail = (reason: string): never => {
    throw new InvalidDefinitionError(owner, field, reason);
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
