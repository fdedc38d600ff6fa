import type { PermitDenied } from '../../permits/acquire-result';
import type { Permit } from '../../permits/permit';
import type { RunLog } from './run-log';
import type { ObservedRun, ObservedRunEnd, ObservedSkip, RunObserver } from './run-observer';
import type { ScheduledJob } from './scheduled-job';
import type { SlotVerdict } from '../job-view';

/**
 * What the library's own observers hear besides a user's: the permit decisions of the run path, the instants nobody
 * ran, and (tracing) the run itself to wrap. Internal: applications implement {@link RunObserver}.
 */
export interface RunPipelineObserver extends RunObserver {
  /** A call got the job's permit: `fresh` when its token is new here (a grant), else a refresh of the one it ran under. */
  permitHeld?(job: ScheduledJob, token: number, fresh: boolean): void;
  /** A call was denied the job's permit; `lost` when this node held the job until now. */
  permitDenied?(job: ScheduledJob, denied: PermitDenied, lost: boolean): void;
  /** A call ran (or caught up) under `permit`; `newlyHeld` when a hold-mode job now runs here and did not before. */
  ranUnder?(job: ScheduledJob, permit: Permit, newlyHeld: boolean): void;
  /**
   * A scheduled `instant` of the job did not run here for `verdict`, a slot ledger's note (with `since`: nor any
   * instant since then); `missed` is never noted, only judged.
   */
  slot?(job: ScheduledJob, verdict: Exclude<SlotVerdict, 'missed'>, instant: number, since?: number): void;
  /** The slot ledger judged `instant` of the job missed, with this node's write: once for the cluster. */
  missed?(job: ScheduledJob, instant: number): void;
  /** A scheduled run started `lateByMs` after its instant, more than its job's `health.grace`. */
  late?(job: ScheduledJob, run: ObservedRun, lateByMs: number): void;
  /** A run went past its job's `maxRunTime` (its signal fired); it ended after `durationMs`, however it ended. */
  overran?(job: ScheduledJob, run: ObservedRun, durationMs: number): void;
  /** Wraps the run's call of the job (tracing's span, the job's async context): must call `work` once. */
  around?<T>(run: ObservedRun, work: () => Promise<T>): Promise<T>;
}

type Hook = Exclude<keyof RunPipelineObserver, 'around'>;

/** The hooks a user's observer is called at (the public {@link RunObserver}); the others are the library's own. */
const USER_HOOKS: ReadonlySet<Hook> = new Set<keyof RunObserver>(['started', 'ended', 'skipped']);
type Args<K extends Hook> = Parameters<NonNullable<RunPipelineObserver[K]>>;

/**
 * The one ordered seam around every run: the library's observers (history, events, run-now outcome, tracing, log)
 * first, in the order given, then the users', in the order added. Each call is guarded: an observer that throws is
 * logged and neither the run nor the observers after it are affected.
 */
export class RunObservers {
  private readonly users: RunObserver[] = [];

  constructor(private readonly own: readonly RunPipelineObserver[], private readonly log: RunLog) {}

  /** Adds a user's observer, after every one before it; returns what removes it. */
  add(observer: RunObserver): () => void {
    this.users.push(observer);
    return () => {
      const at = this.users.indexOf(observer);
      if (at >= 0) this.users.splice(at, 1);
    };
  }

  /** Calls `hook` on every observer that has it, in order, each guarded. */
  tell<K extends Hook>(hook: K, ...args: Args<K>): void {
    const observers: RunPipelineObserver[] = USER_HOOKS.has(hook) ? [...this.own, ...this.users] : [...this.own];
    for (const observer of observers) {
      const fn = observer[hook] as ((...a: Args<K>) => void) | undefined;
      if (!fn) continue;
      try {
        fn.apply(observer, args);
      } catch (error) {
        this.log.warn(`a run observer failed at ${hook} (the run goes on): ${(error as Error)?.message ?? String(error)}`);
      }
    }
  }

  /** Runs `work` inside every library observer's `around`, the first outermost. */
  around<T>(run: ObservedRun, work: () => Promise<T>): Promise<T> {
    return this.own.reduceRight<() => Promise<T>>((inner, observer) => (observer.around ? () => observer.around!(run, inner) : inner), work)();
  }

  /** Tells every observer that `run` started. */
  started(run: ObservedRun): void {
    this.tell('started', run);
  }

  /** Tells every observer how `run` ended. */
  ended(run: ObservedRun, end: ObservedRunEnd): void {
    this.tell('ended', run, end);
  }

  /** Tells every observer that a tick of `job` (for `instant`, when it names one) did not run here. */
  skipped(job: ScheduledJob, reason: string, instant: number | undefined): void {
    const skip: ObservedSkip = { job: job.name, semaphore: job.options.semaphore, reason, ...(instant !== undefined && { instant }) };
    this.tell('skipped', skip);
  }
}
