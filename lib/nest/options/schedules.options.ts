import { z } from 'zod';
import { absentAs, durationInput } from '../../core/input-fields';
import type { DurationInput } from '../../permits/semaphore-definition';
import { wholeNumberOption } from './option-fields';
import { optionsObject, parseOption } from './option-schema';

/** Options of schedules (module option `schedules`): the run history of jobs. Every field is optional. */
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
}

/** The `schedules` option after defaults and validation. */
export interface ResolvedSchedulesOptions {
  readonly keep: number;
  readonly flushIntervalMs: number;
}

// The flush interval is read last, after the other fields: see resolveSchedulesOptions.
const HISTORY_OPTIONS = optionsObject(
  { keep: absentAs(20, wholeNumberOption({ min: 1, max: 1_000 })), flushInterval: z.unknown().optional() } satisfies Record<keyof NonNullable<SchedulesOptions['history']>, z.ZodType>,
  { lists: true },
);

export const SCHEDULES_OPTIONS = optionsObject(
  {
    history: absentAs({}, HISTORY_OPTIONS),
  } satisfies Record<keyof SchedulesOptions, z.ZodType>,
  { lists: true },
);

/** Validates the `schedules` option; an error names the field (`schedules.history.keep`). */
export function resolveSchedulesOptions(schedules: SchedulesOptions | undefined): ResolvedSchedulesOptions {
  const { history } = parseOption(SCHEDULES_OPTIONS, schedules ?? {}, 'schedules');
  return {
    keep: history.keep,
    flushIntervalMs: parseOption(absentAs('10s', durationInput()), history.flushInterval, 'schedules.history.flushInterval'),
  };
}
