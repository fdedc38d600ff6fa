import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { PermitLostError } from '../../permits/errors/permit-lost.error';
import type { PermitLease } from '../../permits/permit-lease';
import { ExclusiveRuns } from '../permits/exclusive-runs';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { SemaphoreAdminService } from '../permits/semaphore-admin.service';
import { messages } from '../gatekeeper.messages';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';
import { UnheldSemaphoreMonitor } from '../permits/unheld-semaphore.monitor';
import { PresenceRuntime } from '../presence/presence.runtime';
import { GatekeeperEvents } from '../signals/gatekeeper-events';
import { GatekeeperTracing } from '../signals/gatekeeper-tracing';
import { runFailure, type RunRecord, type RunTrigger } from '../../schedules/run-record';
import { SchedulesRuntime } from './schedules.runtime';
import type { JobStart, ManualRun } from './job-start';
import type { RegisteredJob } from './job-registry';
import { MissedRuns } from './missed-runs';
import type { RunGrant } from '../../permits/permit-executor';
import { runContext } from './run-context';
import { intervalTick, LATE_DECISION, lateDecision, type TickTiming } from '../../schedules/late-tick.rules';

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
interface Running {
  readonly lease: PermitLease;
  /** Told to stop by the next tick (`overlap: 'replace'`): its end is `replaced`, not a failure. */
  replaced: boolean;
}

/** Runs a `@ClusterSingleton` method's tick: acquire or refresh, run under the permit, release in release mode. */
@Injectable()
export class ClusterSingletonRunner implements OnApplicationBootstrap {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  /**
   * Methods with a call deciding or running now (a tick, a manual run, or start-up's catch-up), marked before the
   * decision so a stall cannot stack them, with what settles when that call is over.
   */
  private readonly active = new Map<string, { readonly tick: boolean; readonly done: Promise<void> }>();
  private readonly holding = new Set<string>();
  private readonly unheld: UnheldSemaphoreMonitor;
  /** The token each method last ran under: a new one is a grant, the same one a refresh. */
  private readonly tokens = new Map<string, number>();
  /** The reason of each method's last skipped tick (decorated methods only, so bounded). */
  private readonly lastSkip = new Map<string, string>();
  /** The newest scheduled instant each job started for here: a second tick for it (a timer firing twice) is skipped. */
  private readonly lastInstant = new Map<string, number>();
  /** The run of each method going on now, with its lease (for `overlap: 'replace'`). */
  private readonly running = new Map<string, Running>();
  /** Methods whose tick is waiting for the run it replaces to end. */
  private readonly replacing = new Set<string>();
  private readonly missed: MissedRuns;

  constructor(
    private readonly runs: ExclusiveRuns,
    private readonly events: GatekeeperEvents,
    runtime: PermitsRuntime,
    semaphores: SemaphoreAdminService,
    @Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions,
    membership: PresenceRuntime,
    private readonly tracing: GatekeeperTracing,
    private readonly schedules: SchedulesRuntime,
    @Inject(GATEKEEPER_OPTIONS) private readonly moduleOptions: ResolvedGatekeeperOptions,
  ) {
    this.unheld = new UnheldSemaphoreMonitor(
      {
        definition: (name) => semaphores.getDefinition(name),
        livePermits: (name) => runtime.viewedPermits(name),
        lastToken: (name) => runtime.viewedLastToken(name),
        liveInstances: () => membership.confirmedParticipants(),
      },
      this.logger,
      () => options.permitClock.now(),
    );
    this.missed = new MissedRuns(schedules.recorder, events, options.clock, this.logger, options.permitClock);
  }

  /**
   * Jobs with `missedRuns: 'runOnce'` catch up as soon as this node can run them: each is decided once now (not
   * at its next tick, which may be a day away), and runs only its newest missed instant, if one is due.
   */
  onApplicationBootstrap(): void {
    const startedAt = this.moduleOptions.clock.now();
    this.missed.armed(startedAt);
    for (const job of this.schedules.jobs.all()) {
      if (job.options.missedRuns !== 'runOnce') continue;
      void this.run(job, { kind: 'startup', startedAt }).catch((error: unknown) => this.logger.warn(`${job.name}: the catch-up at start-up failed: ${(error as Error).message}`));
    }
  }

  /**
   * A call of a `@ClusterSingleton` method (its `@Cron` tick, or the application calling it): a tick of the job
   * `where`, running `body` (the method with the call's arguments). A method start-up did not register (its class
   * not a provider the explorer found) runs as a job of its own options, with no schedule.
   */
  tick(options: ResolvedClusterSingletonOptions, where: string, body: () => unknown): Promise<unknown> {
    const job = this.schedules.jobs.get(where) ?? { name: where, options, invoke: body };
    return this.run(job, { kind: 'tick' }, body);
  }

  /**
   * The one run path of every job: a tick, a run now and a catch-up each decide here, once, whether and what runs
   * under the job's permit; the run is recorded in the history and told as events. `body` is what runs (default:
   * the job's own). Returns the body's result, or `undefined` when nothing ran here.
   */
  async run(job: RegisteredJob, start: JobStart, body: () => unknown = job.invoke): Promise<unknown> {
    const { options, name: where } = job;
    const manual = start.kind === 'manual' ? start.manual : undefined;
    const atStart = start.kind === 'startup';
    const trigger = start.kind === 'tick' ? job.trigger : undefined;
    const calledAt = this.moduleOptions.clock.now();
    const instant = trigger?.instantFor(calledAt);
    if (trigger && instant === undefined) {
      // Not a tick: the cron package's timer fired at an instant the expression does not fire at (docs/time-zones.md).
      this.logger.debug(messages.notAFireInstant(where, trigger.expression, trigger.timeZone, calledAt));
      this.skipped(options.semaphore, where, NOT_A_FIRE_INSTANT);
      return undefined;
    }
    if (options.oncePerInstant && instant !== undefined && instant <= (this.lastInstant.get(where) ?? -Infinity)) {
      // Each instant runs at most once here, whatever fires the tick twice (a timer early by its rounding, a schedule
      // re-armed by an edit): a second tick for an instant this node started is not a new tick.
      this.skipped(options.semaphore, where, DUPLICATE_TICK);
      return undefined;
    }
    const busy = this.active.get(where);
    if (busy && atStart) return undefined; // a tick got there first: it catches up itself
    if (busy && (manual || !busy.tick)) {
      // A manual run waits for the call going on here (it is not a tick to drop), and a tick waits for a manual run
      // or start-up's catch-up rather than being dropped for it.
      await Promise.race([busy.done, sleep(MANUAL_WAIT_MS, undefined, { ref: false })]);
      if (this.active.has(where)) {
        if (manual) return undefined; // the requester asks again
        this.skipped(options.semaphore, where, OVERLAP);
        return undefined;
      }
    } else if (busy && !(await this.replaced(options, where, busy.done))) {
      // A tick that overlaps the previous one (still deciding or running) must not start a second copy here,
      // and is dropped rather than queued, so ticks held up by a stall never run in a burst.
      this.logger.verbose(messages.overlap(where));
      this.skipped(options.semaphore, where, OVERLAP);
      return undefined;
    }
    let over!: () => void;
    this.active.set(where, { tick: !manual && !atStart, done: new Promise<void>((resolve) => (over = resolve)) });
    try {
      // Local answers: a non-holder denies and a holder keeps its permit without a round trip until a refresh is due.
      const startedAt = start.kind === 'startup' ? start.startedAt : undefined;
      const call = { instant, manual, atStart, startedAt, timing: this.timingOf(job, start, instant, calledAt) };
      const outcome = await this.runs.run(options.semaphore, (lease, grant) => this.invoke(options.semaphore, where, lease, grant, body, call), {
        local: true,
        keepAlive: options.keepAlive,
        maxRunTimeMs: options.maxRunTimeMs,
        releaseAfter: options.mode === 'release' ? { lockAtLeastForMs: options.lockAtLeastForMs } : undefined,
      });
      if (!outcome.ran) {
        // The code (NO_PERMIT_AVAILABLE, ...), as the events document it: the denial itself printed "[object Object]".
        const { reason } = outcome.denied;
        if (this.holding.delete(where)) {
          this.logger.log(messages.lost(where, outcome.denied));
          this.events.emit({ name: 'gatekeeper.permit.lost', semaphore: options.semaphore, job: where, reason });
        } else if (this.lastSkip.get(where) !== reason) {
          // Once per change of reason, at verbose: a node that does not hold the job says so once, not every tick
          // (its history counts every skipped tick). What needs an operator's eye (the cluster unreachable, a
          // recovery wait, a job that runs nowhere) is said once per change elsewhere, louder.
          this.logger.verbose(messages.skipped(where, outcome.denied));
        }
        this.lastSkip.set(where, reason);
        this.events.emit({ name: 'gatekeeper.permit.denied', semaphore: options.semaphore, job: where, reason });
        this.skipped(options.semaphore, where, reason);
        this.tokens.delete(where);
        this.unheld.denied(where, outcome.denied);
        return undefined;
      }
      if (outcome.value === NOT_CLAIMED || outcome.value === REPLACED) return undefined;
      if (outcome.value === STOPPED) {
        // The run began on a permit it lost while it ran: neither a result nor a holding to report.
        this.holding.delete(where);
        return undefined;
      }
      this.lastSkip.delete(where);
      this.unheld.ran(options.semaphore, outcome.permit);
      if (options.mode === 'hold' && !this.holding.has(where)) {
        this.holding.add(where);
        this.logger.log(messages.granted(where, outcome.permit));
      }
      return outcome.value === LATE ? undefined : outcome.value;
    } finally {
      this.active.delete(where);
      over();
    }
  }

  /**
   * `overlap: 'replace'`: fires the running run's signal and waits (up to `replaceWait`) for its call to be over.
   * Whether the tick may go ahead: never while the old run is still going, so two runs never overlap here.
   */
  private async replaced(options: ResolvedClusterSingletonOptions, where: string, done: Promise<void>): Promise<boolean> {
    const current = this.running.get(where);
    if (options.overlap !== 'replace' || !current || this.replacing.has(where)) return false;
    this.replacing.add(where);
    try {
      current.replaced = true;
      current.lease.end('replaced by the next tick (overlap: replace)');
      const ended = await Promise.race([done.then(() => true), sleep(options.replaceWaitMs, false, { ref: false })]);
      if (!ended) this.logger.warn(messages.notReplaced(where, options.replaceWaitMs));
      return ended && !this.active.has(where);
    } finally {
      this.replacing.delete(where);
    }
  }

  /**
   * A scheduled tick's timing, for the rule that drops a run decided too late: a `@Cron` tick's (or a runtime
   * schedule's) instant and calendar, or an `@Interval` tick's call and interval. None for a run now, start-up's
   * catch-up, or a method with no schedule.
   */
  private timingOf(job: RegisteredJob, start: JobStart, instant: number | undefined, calledAt: number): TickTiming | undefined {
    if (start.kind !== 'tick') return undefined;
    const { trigger, intervalMs } = job;
    if (trigger && instant !== undefined) {
      return { instant, calledAt, shortestPeriodMs: trigger.shortestGapMs, nextInstant: (at) => trigger.next(at, 1)[0] };
    }
    return intervalMs === undefined ? undefined : intervalTick(calledAt, intervalMs);
  }

  /** A tick that did not run here: counted in the history and told to listeners. */
  private skipped(semaphore: string, where: string, reason: string): void {
    this.schedules.recorder.skippedTick(where, reason);
    this.events.emit({ name: 'gatekeeper.job.skipped', semaphore, job: where, reason });
  }

  /**
   * What a call runs under the permit it got: a manual run only once it claimed its request; after a fresh grant,
   * the newest missed instant first when one is due (`missedRuns: 'runOnce'`); then the tick's own run (none at
   * start-up, which only catches up, and none for a tick decided too late: see `lateDecision`).
   */
  private async invoke(
    semaphore: string, where: string, lease: PermitLease, grant: RunGrant, invoke: () => unknown,
    call: { instant?: number; manual?: ManualRun; atStart: boolean; startedAt?: number; timing?: TickTiming },
  ): Promise<unknown> {
    const decidedAt = this.moduleOptions.clock.now();
    const token = lease.permit.fencingToken;
    const { manual, instant, atStart, startedAt, timing } = call;
    if (manual && !(await manual.claim(token))) return NOT_CLAIMED;
    if (manual) manual.started = { token, at: this.moduleOptions.clock.now() };
    const fresh = this.tokens.get(where) !== token;
    this.tokens.set(where, token);
    this.events.emit({ name: fresh ? 'gatekeeper.permit.granted' : 'gatekeeper.permit.refreshed', semaphore, job: where, token });
    if (!manual) {
      // Missed: the instants before this tick's own, or (start-up's catch-up) those up to the node's start; an instant
      // that came while the catch-up was deciding has its own tick, which must not find it already run.
      const catchUp = await this.missed.check(this.schedules.jobs.get(where), grant, instant ?? (startedAt ?? this.moduleOptions.clock.now()) + 1);
      if (catchUp !== undefined) {
        let caughtUp: unknown;
        try {
          caughtUp = await this.once(semaphore, where, lease, invoke, { trigger: 'catchUp', instant: catchUp });
        } catch (error) {
          if (atStart) throw error;
          // The catch-up failed (its history says so); the tick's own run still goes ahead.
          this.logger.error(`${where}: the catch-up run for ${new Date(catchUp).toISOString()} failed: ${(error as Error).message}`);
        }
        if (caughtUp === STOPPED || caughtUp === REPLACED || atStart) return caughtUp;
      }
      if (atStart) return NOT_CLAIMED;
      // Judged after the catch-up, which is late by design and runs: only the tick's own run is dropped.
      const late = timing && lateDecision(timing, decidedAt);
      if (late) {
        this.logger.log(messages.lateDecision(where, timing.instant, late));
        this.skipped(semaphore, where, LATE_DECISION);
        return LATE;
      }
    }
    return this.once(semaphore, where, lease, invoke, { trigger: manual ? 'manual' : 'schedule', instant, request: manual?.request, manual });
  }

  /**
   * One run of the method, recorded in the history and told as events. A job that stops because its lease says the
   * permit is gone (`assertValid()`, or the signal's reason thrown by an aborted call) did what it should: one
   * warning, not an error with a stack.
   */
  private async once(
    semaphore: string, where: string, lease: PermitLease, invoke: () => unknown,
    run: { trigger: Exclude<RunTrigger, 'call'>; instant?: number; request?: string; manual?: ManualRun },
  ): Promise<unknown> {
    const token = lease.permit.fencingToken;
    const { trigger, instant, request } = run;
    if (instant !== undefined && trigger !== 'manual') this.lastInstant.set(where, Math.max(instant, this.lastInstant.get(where) ?? -Infinity));
    this.events.emit({ name: 'gatekeeper.job.started', semaphore, job: where, token, trigger, instant });
    const record = this.schedules.recorder.started({ job: where, trigger, instant, token, request });
    const running: Running = { lease, replaced: false };
    this.running.set(where, running);
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    try {
      const value = await this.tracing.span('gatekeeper.job', { 'gatekeeper.semaphore': semaphore, 'gatekeeper.job': where, 'gatekeeper.token': token }, async (span) => {
        const current = { job: where, trigger, instant, token, request };
        const result = await runContext.run(current, invoke);
        span.set({ 'gatekeeper.outcome': 'finished' });
        return result;
      });
      this.events.emit({ name: 'gatekeeper.job.finished', semaphore, job: where, token, durationMs: took() });
      this.schedules.recorder.finished(record, 'completed', took());
      run.manual?.finish({ outcome: 'completed', durationMs: took() });
      return value;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const outcome = running.replaced ? 'replaced' : this.failure(lease);
      this.events.emit({ name: 'gatekeeper.job.failed', semaphore, job: where, token, durationMs: took(), error: message, outcome });
      this.schedules.recorder.finished(record, outcome, took(), error);
      run.manual?.finish({ outcome, durationMs: took(), ...runFailure(error) });
      if (running.replaced) {
        // What overlap: 'replace' is for: nothing lost, nothing failed.
        this.logger.debug(messages.replacedRun(where));
        return REPLACED;
      }
      if (!(error instanceof PermitLostError) || lease.isValid()) throw error;
      this.logger.warn(messages.stoppedOnLostPermit(where, error));
      return STOPPED;
    } finally {
      this.running.delete(where);
    }
  }

  /** How a run that threw ended: at its signal (`maxRunTime` reached, or the permit lost or the run replaced), else failed. */
  private failure(lease: PermitLease): Exclude<RunRecord['outcome'], 'running' | 'unknown' | 'completed'> {
    if (!lease.signal.aborted) return 'failed';
    return lease.reachedMaxRunTime ? 'stopped' : 'aborted';
  }
}
