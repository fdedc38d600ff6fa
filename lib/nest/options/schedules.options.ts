import { z } from 'zod';
import { absentAs, durationInput } from '../../core/input-fields';
import type { DurationInput } from '../../permits/semaphore-definition';
import type { HistoryStore } from '../../schedules/history-store';
import type { ScheduleStore } from '../../schedules/schedule-store';
import { objectWithMethod, wholeNumberOption } from './option-fields';
import { optionsObject, parseOption } from './option-schema';

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

// The flush interval is read last, after the stores, as it always was: see resolveSchedulesOptions.
const HISTORY_OPTIONS = optionsObject(
  { keep: absentAs(20, wholeNumberOption({ min: 1, max: 1_000 })), flushInterval: z.unknown().optional() } satisfies Record<keyof NonNullable<SchedulesOptions['history']>, z.ZodType>,
  { lists: true },
);

export const SCHEDULES_OPTIONS = optionsObject(
  {
    history: absentAs({}, HISTORY_OPTIONS),
    historyStore: objectWithMethod<HistoryStore>('write', 'must be a HistoryStore (e.g. new MemoryHistoryStore())').optional(),
    store: objectWithMethod<ScheduleStore>('compareAndSet', 'must be a ScheduleStore (e.g. new MemoryScheduleStore())').optional(),
  } satisfies Record<keyof SchedulesOptions, z.ZodType>,
  { lists: true },
);

/** Validates the `schedules` option; an error names the field (`schedules.history.keep`). */
export function resolveSchedulesOptions(schedules: SchedulesOptions | undefined): ResolvedSchedulesOptions {
  const { history, historyStore, store } = parseOption(SCHEDULES_OPTIONS, schedules ?? {}, 'schedules');
  return {
    keep: history.keep,
    ...(store !== undefined && { store }),
    flushIntervalMs: parseOption(absentAs('10s', durationInput()), history.flushInterval, 'schedules.history.flushInterval'),
    ...(historyStore !== undefined && { historyStore }),
  };
}
