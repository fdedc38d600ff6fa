import { compareCodePoints } from '../core/code-point-order';
import { MAX_SCHEDULE_DATA_BYTES, type JsonValue } from './schedule-definition';
import { invalidSchedule } from './errors/schedule.errors';

/** Deeper than this, data is refused rather than walked (it would be no one's schedule data, and could blow the stack). */
const MAX_DEPTH = 64;

/**
 * A schedule's data in canonical form: plain JSON, objects' keys in code-point order, `-0` as `0`, members whose
 * value is `undefined` left out (as `JSON.stringify` does). Equal data then encodes to equal bytes, so two replicas
 * upserting the same schedule write nothing the second time. Throws {@link InvalidInputError} naming the schedule
 * and the path of the first bad value (`data.tenant.ids[2]`): a function, a class instance (a `Date`: store its ISO
 * string), `NaN` or an infinity, a cycle, or more than {@link MAX_SCHEDULE_DATA_BYTES} bytes encoded.
 */
export function canonicalData(schedule: string, data: unknown): JsonValue {
  const canonical = canonicalValue(schedule, data === undefined ? null : data, 'data', new Set(), 0);
  const bytes = new TextEncoder().encode(JSON.stringify(canonical)).length;
  if (bytes > MAX_SCHEDULE_DATA_BYTES) {
    throw invalidSchedule(schedule, 'data', `must be at most ${MAX_SCHEDULE_DATA_BYTES} bytes as JSON, got ${bytes}`);
  }
  return canonical;
}

function canonicalValue(schedule: string, value: unknown, path: string, parents: Set<object>, depth: number): JsonValue {
  const fail = (reason: string): never => {
    throw invalidSchedule(schedule, path, reason);
  };
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(`must be JSON, got ${String(value)}`);
    return value === 0 ? 0 : value;
  }
  if (typeof value !== 'object') return fail(`must be JSON, got a ${typeof value}`);
  if (depth >= MAX_DEPTH) fail(`is nested deeper than ${MAX_DEPTH} levels`);
  if (parents.has(value)) fail('refers back to itself (a cycle): not JSON');
  parents.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((item, i) => {
        if (item === undefined) throw invalidSchedule(schedule, `${path}[${i}]`, 'must be JSON, got undefined');
        return canonicalValue(schedule, item, `${path}[${i}]`, parents, depth + 1);
      });
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      fail(`must be plain JSON, got a ${(value as object).constructor?.name ?? 'class instance'}${value instanceof Date ? ' (store its ISO string)' : ''}`);
    }
    const sorted: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value).sort(compareCodePoints)) {
      const member = (value as Record<string, unknown>)[key];
      if (member === undefined) continue;
      // Defined, not assigned: a `__proto__` key (JSON.parse makes one) must stay data, not become the prototype.
      Object.defineProperty(sorted, key, { value: canonicalValue(schedule, member, `${path}.${key}`, parents, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return sorted;
  } finally {
    parents.delete(value);
  }
}
