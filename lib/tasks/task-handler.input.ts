import { parseDuration } from '../core/duration';
import type { DurationInput } from '../permits/semaphore-definition';
import type { BackoffPolicy } from '../store/tasks/task';
import type { TaskHandlerOptions } from './task-handler';

/** How a type's tasks run (`@TaskHandler`, `@GroupFinishedHandler`, `@OncePerTrigger`). */
export interface TaskHandlerDecoratorOptions {
  /** The lease of a claim; renew within it (`context.renewLease()`). Default `'30s'`. */
  lease?: DurationInput;
  /** Attempts (failed, retried or lapsed) before a task fails for good, unless its submit names a number. Default 3. */
  maxAttempts?: number;
  /** Retry backoff: `base × factor^(attempt − 1)`, at most `max`. Default `{ base: '1s', factor: 2, max: '1m' }`. */
  backoff?: { base?: DurationInput; factor?: number; max?: DurationInput };
}

/** The longest delay a Node timer takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const HANDLER_KEYS: ReadonlyArray<keyof TaskHandlerDecoratorOptions> = ['lease', 'maxAttempts', 'backoff'];
const BACKOFF_KEYS = ['base', 'factor', 'max'];

/**
 * Validates a handler decorator's options into the worker's; `fail` makes the error, naming the decorator and the
 * type (`where`) and the field.
 */
export function resolveTaskHandlerOptions(where: string, input: TaskHandlerDecoratorOptions | undefined, fail: (field: string, reason: string) => Error): TaskHandlerOptions {
  const options = input === undefined ? {} : input;
  if (options === null || typeof options !== 'object') throw fail('options', `must be an object, got ${String(options)}`);
  for (const key of Object.keys(options)) {
    if (!(HANDLER_KEYS as readonly string[]).includes(key)) throw fail(key, `is not an option (expected one of ${HANDLER_KEYS.join(', ')})`);
  }
  const duration = (value: DurationInput, field: string) => {
    try {
      return parseDuration(value, where, field);
    } catch (error) {
      throw fail(field, (error as Error).message);
    }
  };
  const { maxAttempts, backoff } = options;
  if (maxAttempts !== undefined && (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)) {
    throw fail('maxAttempts', `must be a whole number, 1 or more, got ${JSON.stringify(maxAttempts)}`);
  }
  let policy: BackoffPolicy | undefined;
  if (backoff !== undefined) {
    if (backoff === null || typeof backoff !== 'object') throw fail('backoff', `must be { base, factor, max }, got ${JSON.stringify(backoff)}`);
    for (const key of Object.keys(backoff)) if (!BACKOFF_KEYS.includes(key)) throw fail(`backoff.${key}`, `is not an option (expected one of ${BACKOFF_KEYS.join(', ')})`);
    const factor = backoff.factor ?? 2;
    if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) throw fail('backoff.factor', `must be a number, 1 or more, got ${JSON.stringify(factor)}`);
    policy = { baseMs: duration(backoff.base ?? '1s', 'backoff.base'), factor, maxMs: duration(backoff.max ?? '1m', 'backoff.max') };
    if (policy.maxMs < policy.baseMs) throw fail('backoff.max', `must be at least backoff.base (${policy.baseMs} ms), got ${policy.maxMs} ms`);
  }
  const leaseMs = options.lease === undefined ? undefined : duration(options.lease, 'lease');
  // A lease is timed on this node (its renewal and expiry timers), and Node timers end at 2^31 − 1 ms.
  if (leaseMs !== undefined && leaseMs > MAX_TIMER_MS) throw fail('lease', `must be at most 24 days (${MAX_TIMER_MS} ms), got ${leaseMs} ms`);
  return {
    ...(leaseMs !== undefined && { leaseMs }),
    ...(maxAttempts !== undefined && { maxAttempts }),
    ...(policy && { backoff: policy }),
  };
}
