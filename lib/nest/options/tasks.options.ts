import type { z } from 'zod';
import { absentAs, durationInput } from '../../core/input-fields';
import type { DurationInput } from '../../permits/semaphore-definition';
import { offOr, wholeNumberOption } from './option-fields';
import { notAnOption, optionsObject, parseOption } from './option-schema';

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
}

/** The `tasks` option after defaults and validation. */
export interface ResolvedTasksOptions {
  readonly concurrency: number;
  readonly scanMs: number;
  readonly retentionMs: number;
  /** 0: never. */
  readonly purgeMs: number;
}

// Fields in the order they are checked; the messages list them as the interface does.
export const TASKS_OPTIONS = optionsObject(
  {
    concurrency: absentAs(4, wholeNumberOption({ min: 1 })),
    scanInterval: absentAs('5s', durationInput()),
    retention: absentAs('24h', durationInput()),
    purgeInterval: offOr(absentAs('1m', durationInput())),
  } satisfies Record<keyof TasksOptions, z.ZodType>,
  {
    unknownKey: notAnOption(['concurrency', 'scanInterval', 'retention', 'purgeInterval'] satisfies Array<keyof TasksOptions>),
    lists: true,
  },
);

/** Validates the `tasks` option; an error names the field (`tasks.scanInterval`). */
export function resolveTasksOptions(tasks: TasksOptions | undefined): ResolvedTasksOptions {
  const { concurrency, scanInterval, retention, purgeInterval } = parseOption(TASKS_OPTIONS, tasks ?? {}, 'tasks');
  return { concurrency, scanMs: scanInterval, retentionMs: retention, purgeMs: purgeInterval };
}
