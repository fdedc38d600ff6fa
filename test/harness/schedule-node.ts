import { join } from 'node:path';
import type { ClusterSingletonOptions, SemaphoreDefinitionInput } from '../../lib';
import { nodeBasicsEnv, startNodeProcess, type NodeBasics, type NodeProcess } from './node-process';

/** What a schedules node (schedule-app.ts) runs. */
export interface ScheduleNodeSettings extends NodeBasics {
  job: {
    semaphore: string;
    cron: string;
    timeZone?: string;
    duration: string;
    /** How long each run takes. */
    runMs: number;
    /** More decorator options (missedRuns, overlap, ...). */
    options?: Partial<ClusterSingletonOptions>;
    definitions?: SemaphoreDefinitionInput[];
    flushInterval?: string;
    /** Runs kept per job in the history. */
    keep?: number;
    /** While this file exists, a run records its start, then ends `failed` and throws. */
    failWhile?: string;
    /**
     * Record what the node hears of the job's health as `alert` events: `'library'`, the module's own
     * `gatekeeper.job.failing` and `recovered`; `'naive'` (a control), what a monitor on each replica would say:
     * failing at this node's own first failure after a success, recovered at its first success after a failure.
     */
    alerts?: 'library' | 'naive';
  };
  /** More environment (a clock-shifting preload). */
  env?: NodeJS.ProcessEnv;
}

/** The job's name in the run history and the API. */
export const SCHEDULE_JOB = 'ScheduleJobs.tick';

/** Starts schedule-app.ts as node `settings.name` and waits until it is READY. */
export function startScheduleNode(settings: ScheduleNodeSettings): Promise<NodeProcess> {
  return startNodeProcess(join(__dirname, 'schedule-app.ts'), settings.name, { ...nodeBasicsEnv(settings), ...settings.env, SCHEDULE: JSON.stringify(settings.job) }, settings.historyFile);
}
