import type { Clock } from '../../core/clock';
import type { PermitExecutor, RunGrant } from '../../permits/permit-executor';
import type { PermitLease } from '../../permits/permit-lease';
import { intervalTick, LATE_DECISION, lateDecision, type TickTiming } from '../late-tick.rules';
import type { JobRunOutcome } from '../run-record';
import { type JobKnownSince, MissedRuns } from './missed-runs';
import { runContext, runsInContext } from './run-context';
import { OVERLAP, RunGate } from './run-gate';
import { DenyReason, TRANSIENT_DENIALS } from '../../permits/deny-reason';
import type { RunLog } from './run-log';
import type { ObservedRun } from './run-observer';
import type { RunObservers } from './run-observers';
import { runMessages } from './run.messages';
import type { JobStart, ManualRun, ScheduledJob } from './scheduled-job';
import { LeaseLostError } from '../../core/errors/lease-lost.error';

/** What a run that stopped on a lost permit comes to (the caller gets `undefined`). */
const STOPPED = Symbol('stopped on a lost permit');
/** A run the next tick replaced (`overlap: 'replace'`): it ended as told, on a permit this node still holds. */
const REPLACED = Symbol('replaced by the next tick');
/**
 * A tick whose decision landed more than half a period after its instant: not run, so it does not start back to back
 * with the next tick; the permit it got is kept (hold mode) or released as usual (release mode).
 */
const LATE = Symbol('decided too late to run');
/** What a call comes to that ran nothing here: a manual run another node claimed, a start-up with nothing to catch up. */
const NOT_CLAIMED = Symbol('nothing ran');

/** What the runner stands on. */
export interface JobRunnerParts {
  /** Runs work under a semaphore's permit (the permits' executor, with the lease in async context). */
  readonly permits: Pick<PermitExecutor, 'run'>;
  /** The ordered observers every run is told to. */
  readonly observers: RunObservers;
  /** Since when the history knows a job, for the catch-up. */
  readonly history: JobKnownSince;
  /** This node's clock (fire instants), and the one permits are timed by. */
  readonly clock: Clock;
  readonly permitClock: Clock;
  readonly log: RunLog;
  /** This node's job of a name, for the catch-up (a runtime schedule's job may have been replaced meanwhile). */
  job(name: string): ScheduledJob | undefined;
  /**
   * Since when a semaphore has had no holder on any node although it is not paused (no live node may take it), once
   * that has lasted longer than its duration; `undefined` otherwise. A tick denied meanwhile is noted `noEligibleNode`.
   */
  runsNowhere?(semaphore: string): number | undefined;
}

/** A call on its way: what it runs and what it is for. */
interface Call {
  readonly job: ScheduledJob;
  readonly body: () => unknown;
  readonly instant?: number;
  readonly manual?: ManualRun;
  readonly atStart: boolean;
  readonly startedAt?: number;
  readonly timing?: TickTiming;
}

/**
 * The one run path of every job, outside Nest: a tick, a run now and a catch-up each go through {@link run}, which
 * decides once whether and what runs here (the gate's local rules, then the permit), runs it under the permit, and
 * tells the ordered {@link RunObservers} (history, events, run-now outcome, tracing, the users') what happened.
 */
export class JobRunner {
  /** The token each job last ran under: a new one is a grant, the same one a refresh. */
  private readonly tokens = new Map<string, number>();
  /** Hold-mode jobs this node runs now (from one tick to the next). */
  private readonly holding = new Set<string>();
  private readonly gate: RunGate;
  private readonly missed: MissedRuns;

  constructor(private readonly parts: JobRunnerParts) {
    this.gate = new RunGate(parts.log);
    this.missed = new MissedRuns(parts.history, parts.clock, parts.log, parts.permitClock);
  }

  /** Now, on the clock the jobs' instants are on: what {@link JobRunner.catchUpAtStart} takes as the moment of arming. */
  now(): number {
    return this.parts.clock.now();
  }

  /**
   * Jobs with `missedRuns: 'runOnce'` catch up as soon as this node can run them: each is decided once now (not
   * at its next tick, which may be a day away), and runs only its newest missed instant before `armedAt`, if one is
   * due. `armedAt` is taken before the schedules' timers start (default: now): an instant after it is the timers'
   * to fire, and one the catch-up also ran would run twice.
   */
  catchUpAtStart(jobs: readonly ScheduledJob[], armedAt = this.parts.clock.now()): void {
    const startedAt = armedAt;
    this.missed.armed(startedAt);
    for (const job of jobs) {
      if (job.options.missedRuns !== 'runOnce') continue;
      void this.run(job, { kind: 'startup', startedAt }).catch((error: unknown) => this.parts.log.warn(`${job.name}: the catch-up at start-up failed: ${(error as Error).message}`));
    }
  }

  /**
   * Decides once whether `job` runs here for `start`, and runs `body` (default: the job's own) under its permit.
   * Returns the body's result, or `undefined` when nothing ran here.
   */
  async run(job: ScheduledJob, start: JobStart, body: () => unknown = job.invoke): Promise<unknown> {
    const { options, name: where } = job;
    const { observers } = this.parts;
    const calledAt = this.parts.clock.now();
    if (job.paused && start.kind === 'tick') {
      // A paused runtime schedule still ticks, so that its instants are noted paused rather than judged missed.
      const instant = job.trigger?.instantFor(calledAt);
      observers.skipped(job, DenyReason.PAUSED, instant);
      if (instant !== undefined) observers.tell('slot', job, 'paused', instant);
      return undefined;
    }
    const entry = await this.gate.enter(job, start, calledAt);
    if (!entry.pass) {
      if (entry.reason !== undefined) observers.skipped(job, entry.reason, entry.instant);
      if (entry.reason === OVERLAP && entry.instant !== undefined) observers.tell('slot', job, 'overlap', entry.instant);
      return undefined;
    }
    try {
      const { instant } = entry;
      const call: Call = {
        job, body, instant, manual: start.kind === 'manual' ? start.manual : undefined, atStart: start.kind === 'startup',
        startedAt: start.kind === 'startup' ? start.startedAt : undefined, timing: timingOf(job, start, instant, calledAt),
      };
      // Local answers: a non-holder denies and a holder keeps its permit without a round trip until a refresh is due.
      const outcome = await this.parts.permits.run(options.semaphore, (lease, grant) => this.invoke(call, lease, grant), {
        local: true,
        user: where,
        keepAlive: options.keepAlive,
        maxRunTimeMs: options.maxRunTimeMs,
        releaseAfter: options.mode === 'release' ? { lockAtLeastForMs: options.lockAtLeastForMs } : undefined,
      });
      if (!outcome.ran) {
        observers.tell('permitDenied', job, outcome.denied, this.holding.delete(where));
        observers.skipped(job, outcome.denied.reason, instant);
        if (start.kind === 'tick' && instant !== undefined) this.noteDenied(job, outcome.denied.reason, instant);
        this.tokens.delete(where);
        return undefined;
      }
      if (outcome.value === NOT_CLAIMED || outcome.value === REPLACED) return undefined;
      if (outcome.value === STOPPED) {
        // The run began on a permit it lost while it ran: neither a result nor a holding to report.
        this.holding.delete(where);
        return undefined;
      }
      const newlyHeld = options.mode === 'hold' && !this.holding.has(where);
      if (newlyHeld) this.holding.add(where);
      this.parts.observers.tell('ranUnder', job, outcome.permit, newlyHeld);
      return outcome.value === LATE ? undefined : outcome.value;
    } finally {
      entry.leave();
    }
  }

  /** A tick denied its permit: noted for the slot ledger when it says why the instant runs nowhere. */
  private noteDenied(job: ScheduledJob, reason: string, instant: number): void {
    if (reason === DenyReason.PAUSED) return this.parts.observers.tell('slot', job, 'paused', instant);
    if (TRANSIENT_DENIALS.has(reason as DenyReason)) return;
    const since = this.parts.runsNowhere?.(job.options.semaphore);
    if (since !== undefined) this.parts.observers.tell('slot', job, 'noEligibleNode', instant, since);
  }

  /**
   * What a call runs under the permit it got: a manual run only once it claimed its request; after a fresh grant,
   * the newest missed instant first when one is due (`missedRuns: 'runOnce'`); then the tick's own run (none at
   * start-up, which only catches up, and none for a tick decided too late: see `lateDecision`).
   */
  private async invoke(call: Call, lease: PermitLease, grant: RunGrant): Promise<unknown> {
    const { clock, observers, log } = this.parts;
    const decidedAt = clock.now();
    const token = lease.permit.fencingToken;
    const { job, manual, instant, atStart, startedAt, timing } = call;
    if (manual && !(await manual.claim(token))) return NOT_CLAIMED;
    if (manual) manual.started = { token, at: clock.now() };
    const fresh = this.tokens.get(job.name) !== token;
    this.tokens.set(job.name, token);
    observers.tell('permitHeld', job, token, fresh);
    if (!manual) {
      // Missed: the instants before this tick's own, or (start-up's catch-up) those up to the node's start; an instant
      // that came while the catch-up was deciding has its own tick, which must not find it already run.
      const catchUp = await this.missed.check(this.parts.job(job.name), grant, instant ?? (startedAt ?? clock.now()) + 1);
      if (catchUp !== undefined) {
        let caughtUp: unknown;
        try {
          caughtUp = await this.once(call, lease, { trigger: 'catchUp', instant: catchUp });
        } catch (error) {
          if (atStart) throw error;
          // The catch-up failed (its history says so); the tick's own run still goes ahead.
          log.error(`${job.name}: the catch-up run for ${new Date(catchUp).toISOString()} failed: ${(error as Error).message}`);
        }
        if (caughtUp === STOPPED || caughtUp === REPLACED || atStart) return caughtUp;
      }
      if (atStart) return NOT_CLAIMED;
      // Judged after the catch-up, which is late by design and runs: only the tick's own run is dropped.
      const late = timing && lateDecision(timing, decidedAt);
      if (late) {
        log.log(runMessages.lateDecision(job.name, timing.instant, late));
        observers.skipped(job, LATE_DECISION, instant);
        return LATE;
      }
    }
    return this.once(call, lease, { trigger: manual ? 'manual' : 'schedule', instant, request: manual?.request });
  }

  /**
   * One run of the job, told to the observers. A job that stops because its lease says the permit is gone
   * (`assertValid()`, or the signal's reason thrown by an aborted call) did what it should: one warning, not an
   * error with a stack.
   */
  private async once(call: Call, lease: PermitLease, what: Pick<ObservedRun, 'trigger' | 'instant' | 'request'>): Promise<unknown> {
    const { observers, log } = this.parts;
    const { job } = call;
    const run: ObservedRun = { job: job.name, semaphore: job.options.semaphore, token: lease.permit.fencingToken, ...what };
    const running = this.gate.begin(job.name, lease, what.trigger === 'manual' ? undefined : what.instant);
    observers.started(run);
    const graceMs = job.options.health?.graceMs;
    if (graceMs !== undefined && what.trigger === 'schedule' && what.instant !== undefined) {
      const lateByMs = this.parts.clock.now() - what.instant;
      if (lateByMs > graceMs) observers.tell('late', job, run, lateByMs);
    }
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    // A catch-up and its tick's own run share one lease: only the run that was going when maxRunTime came overran.
    const overranBefore = lease.reachedMaxRunTime;
    try {
      const current = { job: run.job, trigger: run.trigger, instant: run.instant, token: run.token, request: run.request };
      runsInContext.set(current, { run, lease });
      const value = await observers.around(run, async () => runContext.run(current, call.body));
      observers.ended(run, { outcome: 'completed', durationMs: took() });
      return value;
    } catch (error) {
      const outcome = running.replaced ? 'replaced' : failure(lease);
      observers.ended(run, { outcome, durationMs: took(), error });
      if (running.replaced) {
        // What overlap: 'replace' is for: nothing lost, nothing failed.
        log.debug(runMessages.replacedRun(job.name));
        return REPLACED;
      }
      if (!(error instanceof LeaseLostError && error.kind === 'permit') || lease.isValid()) throw error;
      log.warn(runMessages.stoppedOnLostPermit(job.name, error));
      return STOPPED;
    } finally {
      this.gate.end(job.name);
      if (lease.reachedMaxRunTime && !overranBefore) observers.tell('overran', job, run, took());
    }
  }
}

/**
 * A scheduled tick's timing, for the rule that drops a run decided too late: a `@Cron` tick's (or a runtime
 * schedule's) instant and calendar, or an `@Interval` tick's call and interval. None for a run now, start-up's
 * catch-up, or a method with no schedule.
 */
function timingOf(job: ScheduledJob, start: JobStart, instant: number | undefined, calledAt: number): TickTiming | undefined {
  if (start.kind !== 'tick') return undefined;
  const { trigger, intervalMs } = job;
  if (trigger && instant !== undefined) {
    return { instant, calledAt, shortestPeriodMs: trigger.shortestGapMs, nextInstant: (at) => trigger.next(at, 1)[0] };
  }
  return intervalMs === undefined ? undefined : intervalTick(calledAt, intervalMs);
}

/** How a run that threw ended: at its signal (`maxRunTime` reached, or the permit lost or the run replaced), else failed. */
function failure(lease: PermitLease): Exclude<JobRunOutcome, 'running' | 'unknown' | 'completed'> {
  if (!lease.signal.aborted) return 'failed';
  return lease.reachedMaxRunTime ? 'stopped' : 'aborted';
}
