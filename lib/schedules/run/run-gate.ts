import { setTimeout as sleep } from 'node:timers/promises';
import type { PermitLease } from '../../permits/permit-lease';
import type { RunLog } from './run-log';
import { runMessages } from './run.messages';
import type { JobStart, ScheduledJob } from './scheduled-job';

/** How long a manual run waits for this node's run of the job going on now. */
const MANUAL_WAIT_MS = 30_000;

/** The skip reason of a tick that came while this node's previous run was still going. */
export const OVERLAP = 'OVERLAP';
/** The skip reason of a second tick for an instant this node already started a run for. */
export const DUPLICATE_TICK = 'DUPLICATE_TICK';
/**
 * The skip reason of a tick the cron package fired at an instant that is not one of the expression's (at a
 * daylight-saving fall-back: a fixed-hour job's repeated wall-clock time, or an hour off).
 */
export const NOT_A_FIRE_INSTANT = 'NOT_A_FIRE_INSTANT';

/** A run going on now here, for a tick that would replace it. */
export interface RunningHere {
  readonly lease: PermitLease;
  /** Told to stop by the next tick (`overlap: 'replace'`): its end is `replaced`, not a failure. */
  replaced: boolean;
}

/**
 * What the gate lets through: a call that goes on to the permit (`leave` when it is over, whatever happened), a
 * tick skipped for `reason`, or (no reason) a call that has nothing to do here: a catch-up a tick got ahead of, a
 * manual run that waited in vain (its requester asks again).
 */
export type GateEntry =
  | { readonly pass: true; readonly instant: number | undefined; leave(): void }
  | { readonly pass: false; readonly reason?: string; readonly instant?: number };

/**
 * This node's own rules for a job's calls, decided before the permit: a timer tick at an instant that is not a fire
 * instant, a second tick for an instant already started, and calls that overlap (a tick is dropped, or replaces the
 * run with `overlap: 'replace'`; a run now and a tick wait for a run now or a catch-up). One call per job at a time.
 */
export class RunGate {
  /**
   * Jobs with a call deciding or running now (a tick, a manual run, or start-up's catch-up), marked before the
   * decision so a stall cannot stack them, with what settles when that call is over.
   */
  private readonly active = new Map<string, { readonly tick: boolean; readonly done: Promise<void> }>();
  /** The newest scheduled instant each job started for here: a second tick for it (a timer firing twice) is skipped. */
  private readonly lastInstant = new Map<string, number>();
  /** The run of each job going on now, with its lease (for `overlap: 'replace'`). */
  private readonly running = new Map<string, RunningHere>();
  /** Jobs whose tick is waiting for the run it replaces to end. */
  private readonly replacing = new Set<string>();

  constructor(private readonly log: RunLog) {}

  /** Whether a call of `job` that came at `calledAt` goes on to its permit. */
  async enter(job: ScheduledJob, start: JobStart, calledAt: number): Promise<GateEntry> {
    const { options, name: where } = job;
    const trigger = start.kind === 'tick' ? job.trigger : undefined;
    const instant = trigger?.instantFor(calledAt);
    if (trigger && instant === undefined) {
      // Not a tick: the cron package's timer fired at an instant the expression does not fire at (docs/time-zones.md).
      this.log.debug(runMessages.notAFireInstant(where, trigger.expression, trigger.timeZone, calledAt));
      return { pass: false, reason: NOT_A_FIRE_INSTANT };
    }
    if (options.oncePerInstant && instant !== undefined && instant <= (this.lastInstant.get(where) ?? -Infinity)) {
      // Each instant runs at most once here, whatever fires the tick twice (a timer early by its rounding, a schedule
      // re-armed by an edit): a second tick for an instant this node started is not a new tick.
      return { pass: false, reason: DUPLICATE_TICK, instant };
    }
    const manual = start.kind === 'manual';
    const busy = this.active.get(where);
    if (busy && start.kind === 'startup') return { pass: false }; // a tick got there first: it catches up itself
    if (busy && (manual || !busy.tick)) {
      // A manual run waits for the call going on here (it is not a tick to drop), and a tick waits for a manual run
      // or start-up's catch-up rather than being dropped for it.
      await Promise.race([busy.done, sleep(MANUAL_WAIT_MS, undefined, { ref: false })]);
      if (this.active.has(where)) return manual ? { pass: false } : { pass: false, reason: OVERLAP, instant };
    } else if (busy && !(await this.replaced(job, busy.done))) {
      // A tick that overlaps the previous one (still deciding or running) must not start a second copy here,
      // and is dropped rather than queued, so ticks held up by a stall never run in a burst.
      this.log.verbose(runMessages.overlap(where));
      return { pass: false, reason: OVERLAP, instant };
    }
    let over!: () => void;
    this.active.set(where, { tick: start.kind === 'tick', done: new Promise<void>((resolve) => (over = resolve)) });
    return {
      pass: true,
      instant,
      leave: () => {
        this.active.delete(where);
        over();
      },
    };
  }

  /** A run of `job` starts on `lease`, for `instant` when a scheduled one: a later tick may replace it. */
  begin(job: string, lease: PermitLease, instant: number | undefined): RunningHere {
    if (instant !== undefined) this.lastInstant.set(job, Math.max(instant, this.lastInstant.get(job) ?? -Infinity));
    const running: RunningHere = { lease, replaced: false };
    this.running.set(job, running);
    return running;
  }

  /** The run of `job` ended. */
  end(job: string): void {
    this.running.delete(job);
  }

  /**
   * `overlap: 'replace'`: fires the running run's signal and waits (up to `replaceWait`) for its call to be over.
   * Whether the tick may go ahead: never while the old run is still going, so two runs never overlap here.
   */
  private async replaced(job: ScheduledJob, done: Promise<void>): Promise<boolean> {
    const { options, name: where } = job;
    const current = this.running.get(where);
    if (options.overlap !== 'replace' || !current || this.replacing.has(where)) return false;
    this.replacing.add(where);
    try {
      current.replaced = true;
      current.lease.end('replaced by the next tick (overlap: replace)');
      const ended = await Promise.race([done.then(() => true), sleep(options.replaceWaitMs, false, { ref: false })]);
      if (!ended) this.log.warn(runMessages.notReplaced(where, options.replaceWaitMs));
      return ended && !this.active.has(where);
    } finally {
      this.replacing.delete(where);
    }
  }
}
