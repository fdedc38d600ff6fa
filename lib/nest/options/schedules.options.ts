import { parseOptionDuration } from '../../core/duration';
import { InvalidOptionsError } from '../../core/errors/invalid-options.error';
import type { DurationInput } from '../../permits/semaphore-definition';
import type { HistoryStore } from '../../schedules/history-store';
import type { ScheduleStore } from '../../schedules/schedule-store';

/** Options of schedules (module option `schedules`): the run history of jobs, and where runtime schedules live. Every field is optional. */
export interface SchedulesOptions {
  /** The run history kept in the cluster for every job. */
  history?: {
    /** Runs kept per job (the newest). Default 20. */
    keep?: number;
    /**
     * How often a node writes its runs and skipped ticks to the cluster (batched: one write per job with news, never
     * a call on a tick's path). What a node that crashes can take with it. Default `'10s'`.
     */
    flushInterval?: DurationInput;
  };
  /** Where the history lives instead of the module's store kind (e.g. a shared `MemoryHistoryStore` in tests). */
  historyStore?: HistoryStore;
  /** Where runtime schedules live instead of the module's store kind (e.g. a shared `MemoryScheduleStore` in tests). */
  store?: ScheduleStore;
}

/** The `schedules` option after defaults and validation. */
export interface ResolvedSchedulesOptions {
  readonly keep: number;
  readonly flushIntervalMs: number;
  readonly historyStore?: HistoryStore;
  readonly store?: ScheduleStore;
}

const KEYS = ['history', 'historyStore', 'store'];
const HISTORY_KEYS = ['keep', 'flushInterval'];

/** Validates the `schedules` option; an error names the field (`schedules.history.keep`). */
export function resolveSchedulesOptions(schedules: SchedulesOptions | undefined): ResolvedSchedulesOptions {
  const given = schedules ?? {};
  checkKeys(given, KEYS, 'schedules');
  const history = given.history ?? {};
  checkKeys(history, HISTORY_KEYS, 'schedules.history');
  const keep = history.keep ?? 20;
  if (!Number.isSafeInteger(keep) || keep < 1 || keep > 1_000) {
    throw new InvalidOptionsError('schedules.history.keep', `must be a whole number from 1 to 1000, got ${JSON.stringify(history.keep)}`);
  }
  const store = given.historyStore;
  if (store !== undefined && (typeof store !== 'object' || typeof (store as HistoryStore).write !== 'function')) {
    throw new InvalidOptionsError('schedules.historyStore', 'must be a HistoryStore (e.g. new MemoryHistoryStore())');
  }
  const scheduleStore = given.store;
  if (scheduleStore !== undefined && (typeof scheduleStore !== 'object' || typeof (scheduleStore as ScheduleStore).compareAndSet !== 'function')) {
    throw new InvalidOptionsError('schedules.store', 'must be a ScheduleStore (e.g. new MemoryScheduleStore())');
  }
  return {
    keep,
    ...(scheduleStore !== undefined && { store: scheduleStore }),
    flushIntervalMs: parseOptionDuration(history.flushInterval ?? '10s', 'schedules.history.flushInterval'),
    ...(store !== undefined && { historyStore: store }),
  };
}

function checkKeys(value: unknown, known: readonly string[], path: string): void {
  if (value === null || typeof value !== 'object') throw new InvalidOptionsError(path, `must be an object, got ${String(value)}`);
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new InvalidOptionsError(`${path}.${key}`, `is not an option (expected one of ${known.join(', ')})`);
  }
}
