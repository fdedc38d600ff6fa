import { InvalidDecoratorError } from '../errors/invalid-decorator.error';
import { parseDuration, parseOptionDuration } from '../../core/duration';
import { InvalidOptionsError } from '../../core/errors/invalid-options.error';
import type { DurationInput } from '../../permits/semaphore-definition';
import type { BackoffPolicy } from '../../tasks/task';
import type { TaskStore } from '../../tasks/task-store';
import type { TaskHandlerOptions } from '../../tasks/task-handler';

/** Options of leased distributed tasks (module option `tasks`). Every field is optional. */
export interface TasksOptions {
  /** Handlers this node runs at once. Default 4. A handler that ended frees its slot while its outcome is written. */
  concurrency?: number;
  /**
   * How often a node looks for work without being told: new work is signalled by events, so this is what finds
   * tasks whose lease lapsed (a dead worker's) and any signal that was lost. Detection of a dead worker takes at
   * most the task's lease plus this plus the clock-skew bound. Default `'5s'`.
   */
  scanInterval?: DurationInput;
  /** How long a finished task's id is remembered, so submitting it again is ignored (a redeploy does not rerun it). Default `'24h'`. */
  retention?: DurationInput;
  /** How often a node removes tasks finished longer than `retention` ago; `false`: never. Default `'1m'`. */
  purgeInterval?: DurationInput | false;
  /** Where tasks live instead of the module's own (e.g. a shared `MemoryTaskStore` in tests). Default: the module's store kind. */
  store?: TaskStore;
}

/** How a type's tasks run (`@TaskHandler`, `@GroupFinishedHandler`, `@OncePerTrigger`). */
export interface TaskHandlerDecoratorOptions {
  /** The lease of a claim; renew within it (`context.renewLease()`). Default `'30s'`. */
  lease?: DurationInput;
  /** Attempts (failed, retried or lapsed) before a task fails for good, unless its submit names a number. Default 3. */
  maxAttempts?: number;
  /** Retry backoff: `base × factor^(attempt − 1)`, at most `max`. Default `{ base: '1s', factor: 2, max: '1m' }`. */
  backoff?: { base?: DurationInput; factor?: number; max?: DurationInput };
}

/** The `tasks` option after defaults and validation. */
export interface ResolvedTasksOptions {
  readonly concurrency: number;
  readonly scanMs: number;
  readonly retentionMs: number;
  /** 0: never. */
  readonly purgeMs: number;
  readonly store?: TaskStore;
}

const TASKS_KEYS: ReadonlyArray<keyof TasksOptions> = ['concurrency', 'scanInterval', 'retention', 'purgeInterval', 'store'];
/** The longest delay a Node timer takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const HANDLER_KEYS: ReadonlyArray<keyof TaskHandlerDecoratorOptions> = ['lease', 'maxAttempts', 'backoff'];
const BACKOFF_KEYS = ['base', 'factor', 'max'];

/** Validates the `tasks` option; an error names the field (`tasks.scanInterval`). */
export function resolveTasksOptions(tasks: TasksOptions | undefined): ResolvedTasksOptions {
  const given = tasks ?? {};
  if (given === null || typeof given !== 'object') throw new InvalidOptionsError('tasks', `must be an object, got ${String(given)}`);
  for (const key of Object.keys(given)) {
    if (!(TASKS_KEYS as readonly string[]).includes(key)) throw new InvalidOptionsError(`tasks.${key}`, `is not an option (expected one of ${TASKS_KEYS.join(', ')})`);
  }
  const concurrency = given.concurrency ?? 4;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new InvalidOptionsError('tasks.concurrency', `must be a whole number, 1 or more, got ${JSON.stringify(given.concurrency)}`);
  }
  if (given.store !== undefined && (typeof given.store !== 'object' || typeof (given.store as TaskStore).claimable !== 'function')) {
    throw new InvalidOptionsError('tasks.store', 'must be a TaskStore (e.g. new MemoryTaskStore())');
  }
  return {
    concurrency,
    scanMs: parseOptionDuration(given.scanInterval ?? '5s', 'tasks.scanInterval'),
    retentionMs: parseOptionDuration(given.retention ?? '24h', 'tasks.retention'),
    purgeMs: given.purgeInterval === false ? 0 : parseOptionDuration(given.purgeInterval ?? '1m', 'tasks.purgeInterval'),
    ...(given.store !== undefined && { store: given.store }),
  };
}

/** Validates a handler decorator's options into the worker's; an error names the decorator, the type and the field. */
export function resolveTaskHandlerOptions(where: string, options: TaskHandlerDecoratorOptions = {}): TaskHandlerOptions {
  const fail = (field: string, reason: string) => new InvalidDecoratorError(where, reason, field);
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
