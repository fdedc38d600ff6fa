import { AsyncLocalStorage } from 'node:async_hooks';
import type { PermitLease } from '../../permits/permit-lease';
import type { RunTrigger } from '../run-record';
import type { ObservedRun } from './run-observer';

/** The run of a `@ClusterSingleton` job going on, as `ScheduleService.currentRun()` answers inside it. */
export interface CurrentRun {
  /** The job's name (`Class.method`). */
  readonly job: string;
  /** What started it. */
  readonly trigger: RunTrigger;
  /**
   * The scheduled instant it is for (UTC epoch ms): the same on every node for one tick, so it makes a good
   * idempotency key for what the run writes. `undefined` for a manual run or a job without a cron schedule.
   */
  readonly instant?: number;
  /** The fencing token of the permit it runs under. */
  readonly token: number;
  /** The "run now" request it answers, for a manual run. */
  readonly request?: string;
}

/** Carries the current run into the job's code. */
export const runContext = new AsyncLocalStorage<CurrentRun>();

/**
 * What the library keeps of each run in context beyond what the job sees: the run as its observers (the history) know
 * it, and the lease it runs on. Keyed by the context's own object, so it goes with the run.
 */
export const runsInContext = new WeakMap<CurrentRun, { readonly run: ObservedRun; readonly lease: PermitLease }>();
