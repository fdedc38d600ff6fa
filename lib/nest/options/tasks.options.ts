import { parseOptionDuration } from '../../core/duration';
import { InvalidOptionsError } from '../../core/errors/invalid-options.error';
import type { DurationInput } from '../../permits/semaphore-definition';
import type { TaskStore } from '../../tasks/task-store';

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
