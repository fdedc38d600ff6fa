import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { createRequire } from 'node:module';
import { Subject, type Observable } from 'rxjs';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import type { PermitDenied } from '../../permits/acquire-result';
import type { ObservedRun, ObservedRunEnd, ObservedSkip } from '../../schedules/run/run-observer';
import type { RunPipelineObserver } from '../../schedules/run/run-observers';
import type { ScheduledJob } from '../../schedules/run/scheduled-job';

/**
 * A lifecycle change on this node, as `GatekeeperService.events` streams it and `@nestjs/event-emitter` (when the
 * app has it) emits it under its `name`, e.g. `@OnEvent('gatekeeper.permit.lost')`; every event name is
 * `GatekeeperEvent['name']`. Every event carries when it happened here (`at`) and on which node (`node`).
 */
export type GatekeeperEvent = {
  /** When it happened here (epoch ms, the module's clock). */
  readonly at: number;
  /** The acquirer name of the node it happened on. */
  readonly node: string;
} & (
  /** A `@ClusterSingleton` job got a permit it did not hold (hold mode), or a new one (release mode). */
  | { readonly name: 'gatekeeper.permit.granted'; readonly semaphore: string; readonly job: string; readonly token: number }
  /** A job ran again on the permit it holds. */
  | { readonly name: 'gatekeeper.permit.refreshed'; readonly semaphore: string; readonly job: string; readonly token: number }
  /** A job that held a permit was denied it: another node runs it now, or nobody may. */
  | { readonly name: 'gatekeeper.permit.lost'; readonly semaphore: string; readonly job: string; readonly reason: string }
  /** A job's tick was skipped: no permit here (the reason, e.g. `NO_PERMIT_AVAILABLE`). */
  | { readonly name: 'gatekeeper.permit.denied'; readonly semaphore: string; readonly job: string; readonly reason: string }
  /** A run began: by its schedule (`instant` names the tick), by hand (`manual`), or catching up a missed instant. */
  | { readonly name: 'gatekeeper.job.started'; readonly semaphore: string; readonly job: string; readonly token: number; readonly trigger?: 'schedule' | 'manual' | 'catchUp'; readonly instant?: number }
  | { readonly name: 'gatekeeper.job.finished'; readonly semaphore: string; readonly job: string; readonly token: number; readonly durationMs: number }
  /** A run threw, or stopped at its signal (`outcome`: `failed`, `aborted` when the permit was lost or the run replaced, `stopped` at `maxRunTime`). */
  | { readonly name: 'gatekeeper.job.failed'; readonly semaphore: string; readonly job: string; readonly token: number; readonly durationMs: number; readonly error: string; readonly outcome?: 'failed' | 'aborted' | 'stopped' | 'replaced' }
  /**
   * A job's tick did not run here, and why: a deny reason code (`NO_PERMIT_AVAILABLE`: another node holds it,
   * `PAUSED`, `RECOVERING`, `STORE_UNAVAILABLE`, ...) or `OVERLAP` (the previous run was still going).
   */
  | { readonly name: 'gatekeeper.job.skipped'; readonly semaphore: string; readonly job: string; readonly reason: string }
  /**
   * A scheduled instant of a job ran on no node, and nothing said why (the cluster was down, the store unreachable, the
   * node holding it died): judged by the slot ledger once for the cluster, by the node whose write of the run history
   * judged it, one event per instant (at most 100 per write).
   */
  | { readonly name: 'gatekeeper.job.missed'; readonly semaphore: string; readonly job: string; readonly instant: number }
  /**
   * No live node may run a job: its semaphore has had no holder for longer than its duration and no live node is
   * admitted by its patterns, since `since`. Said once per streak for the cluster; its instants are noted
   * `noEligibleNode` in the slot ledger, not missed.
   */
  | { readonly name: 'gatekeeper.job.unrunnable'; readonly semaphore?: string; readonly job: string; readonly since: number }
  /** A scheduled run started more than its job's `health.grace` after its `instant` (said by the node that ran it). */
  | { readonly name: 'gatekeeper.job.late'; readonly semaphore: string; readonly job: string; readonly token: number; readonly instant: number; readonly lateByMs: number; readonly graceMs: number }
  /** A run went past its job's `maxRunTime` and was told to stop at its signal; `durationMs` is how long it ran in all. */
  | { readonly name: 'gatekeeper.job.overran'; readonly semaphore: string; readonly job: string; readonly token: number; readonly durationMs: number; readonly maxRunTimeMs: number }
  /**
   * A job's runs failed `failures` times in a row, on any nodes, reaching its `health.failureThreshold`: said once for
   * the cluster, by the node whose write of the run history made it so; `lastError` is the newest failure's.
   */
  | { readonly name: 'gatekeeper.job.failing'; readonly job: string; readonly failures: number; readonly lastError?: string; readonly since: number }
  /** A failing job completed `successes` runs in a row (its `health.recoveryThreshold`): said once, as `failing` is. */
  | { readonly name: 'gatekeeper.job.recovered'; readonly job: string; readonly successes: number; readonly failingSince: number }
  | { readonly name: 'gatekeeper.leader.elected'; readonly election: string; readonly epoch: number }
  | { readonly name: 'gatekeeper.leader.lost'; readonly election: string; readonly epoch: number; readonly reason: string }
  | { readonly name: 'gatekeeper.resource.assigned'; readonly allocation: string; readonly resources: readonly string[] }
  | { readonly name: 'gatekeeper.resource.revoked'; readonly allocation: string; readonly resources: readonly string[]; readonly reason: string }
  | { readonly name: 'gatekeeper.task.claimed'; readonly task: string; readonly type: string; readonly epoch: number }
  /** The store accepted the task's result. */
  | { readonly name: 'gatekeeper.task.completed'; readonly task: string; readonly type: string; readonly epoch: number }
  /** The task failed for good (its attempts used up). */
  | { readonly name: 'gatekeeper.task.failed'; readonly task: string; readonly type: string; readonly epoch: number; readonly error: string }
  | { readonly name: 'gatekeeper.task.invalid'; readonly task: string; readonly type: string; readonly epoch: number; readonly error: string }
  /** A group's join ran to completion here (once per group, cluster-wide). */
  | { readonly name: 'gatekeeper.task.group-finished'; readonly task: string; readonly type: string; readonly group: string; readonly epoch: number }
);

/** A `GatekeeperEvent` before the module stamps it with the time and this node. */
export type GatekeeperEventInput = GatekeeperEvent extends infer E ? (E extends GatekeeperEvent ? Omit<E, 'at' | 'node'> : never) : never;

type Emitter = { emit(name: string, payload: unknown): unknown };

/**
 * Whether `subject` has a subscriber: `Subject.observed` (rxjs 7.2 and later). On an rxjs that lacks it (the peer
 * range starts at 7.1) every subject counts as observed, so events are always built there, never lost.
 */
export function isObserved<T>(subject: Subject<T>): boolean {
  return (subject as { observed?: boolean }).observed ?? true;
}

/**
 * The module's lifecycle events: an rxjs stream, always, and `EventEmitter2.emit(name, event)` when the app imports
 * `EventEmitterModule` from `@nestjs/event-emitter` (an optional peer: nothing breaks without it). A listener that
 * throws is logged, never the caller's problem. In the run seam itself (a {@link RunPipelineObserver}), it emits
 * every permit decision, run, skip and missed instant of this node's jobs. Used inside the module; applications read
 * `GatekeeperService.events`.
 */
@Injectable()
export class GatekeeperEvents implements OnApplicationBootstrap, RunPipelineObserver {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly subject = new Subject<GatekeeperEvent>();
  private emitter?: Emitter | null;
  /**
   * Events of the start-up (a leader elected, resources assigned while modules initialise), held for
   * `@OnEvent` listeners, which `@nestjs/event-emitter` subscribes only once the application has bootstrapped.
   */
  private early: GatekeeperEvent[] | undefined = [];

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
  ) {}

  /** Hands the start-up's events to `@OnEvent` listeners once every module's bootstrap hook has run. */
  onApplicationBootstrap(): void {
    this.eventEmitter(); // looked up now, while the app is whole: not in the callback, which may run after a quick close
    setImmediate(() => {
      const early = this.early ?? [];
      this.early = undefined;
      for (const event of early) this.toEmitter(event);
    });
  }

  /** Every event, as it happens on this node. */
  get stream(): Observable<GatekeeperEvent> {
    return this.subject.asObservable();
  }

  /**
   * Whether an event published now reaches anyone: a subscriber to the stream, the app's EventEmitter2, or the
   * start-up's buffer for it. Callers that publish on a hot path build no event when it would not.
   */
  heard(): boolean {
    return isObserved(this.subject) || this.early !== undefined || this.eventEmitter() !== undefined;
  }

  /** Stamps and publishes an event. */
  emit(input: GatekeeperEventInput): void {
    const event = { ...input, at: this.options.clock.now(), node: this.options.holder.acquirer } as GatekeeperEvent;
    try {
      this.subject.next(event);
    } catch (error) {
      this.logger.warn(`a subscriber to ${event.name} failed: ${(error as Error).message}`);
    }
    if (this.early) {
      if (this.early.length < 1_000) this.early.push(event);
      return;
    }
    this.toEmitter(event);
  }

  /** A job's call got its permit: granted when its token is new here, else refreshed. */
  permitHeld(job: ScheduledJob, token: number, fresh: boolean): void {
    this.emit({ name: fresh ? 'gatekeeper.permit.granted' : 'gatekeeper.permit.refreshed', semaphore: job.options.semaphore, job: job.name, token });
  }

  /** A job's call was denied its permit (lost too, when this node held the job until now). */
  permitDenied(job: ScheduledJob, denied: PermitDenied, lost: boolean): void {
    // The code (NO_PERMIT_AVAILABLE, ...), as the events document it.
    const { reason } = denied;
    if (lost) this.emit({ name: 'gatekeeper.permit.lost', semaphore: job.options.semaphore, job: job.name, reason });
    this.emit({ name: 'gatekeeper.permit.denied', semaphore: job.options.semaphore, job: job.name, reason });
  }

  started(run: ObservedRun): void {
    this.emit({ name: 'gatekeeper.job.started', semaphore: run.semaphore, job: run.job, token: run.token, trigger: run.trigger, instant: run.instant });
  }

  ended(run: ObservedRun, end: ObservedRunEnd): void {
    const { semaphore, job, token } = run;
    if (end.outcome === 'completed') {
      this.emit({ name: 'gatekeeper.job.finished', semaphore, job, token, durationMs: end.durationMs });
      return;
    }
    const error = end.error instanceof Error ? end.error.message : String(end.error);
    this.emit({ name: 'gatekeeper.job.failed', semaphore, job, token, durationMs: end.durationMs, error, outcome: end.outcome });
  }

  skipped(skip: ObservedSkip): void {
    this.emit({ name: 'gatekeeper.job.skipped', semaphore: skip.semaphore, job: skip.job, reason: skip.reason });
  }

  missed(job: ScheduledJob, instant: number): void {
    this.emit({ name: 'gatekeeper.job.missed', semaphore: job.options.semaphore, job: job.name, instant });
  }

  late(job: ScheduledJob, run: ObservedRun, lateByMs: number): void {
    this.emit({ name: 'gatekeeper.job.late', semaphore: run.semaphore, job: run.job, token: run.token, instant: run.instant!, lateByMs, graceMs: job.options.health!.graceMs! });
  }

  overran(job: ScheduledJob, run: ObservedRun, durationMs: number): void {
    this.emit({ name: 'gatekeeper.job.overran', semaphore: run.semaphore, job: run.job, token: run.token, durationMs, maxRunTimeMs: job.options.maxRunTimeMs! });
  }

  private toEmitter(event: GatekeeperEvent): void {
    const emitter = this.eventEmitter();
    if (!emitter) return;
    try {
      const result = emitter.emit(event.name, event);
      if (result instanceof Promise) result.catch((error: unknown) => this.logger.warn(`an @OnEvent('${event.name}') listener failed: ${(error as Error).message}`));
    } catch (error) {
      this.logger.warn(`an @OnEvent('${event.name}') listener failed: ${(error as Error).message}`);
    }
  }

  /** The app's EventEmitter2, if `@nestjs/event-emitter` is installed and its module imported; looked up once. */
  private eventEmitter(): Emitter | undefined {
    if (this.emitter === undefined) {
      this.emitter = null;
      try {
        const { EventEmitter2 } = createRequire(__filename)('@nestjs/event-emitter') as { EventEmitter2: new () => Emitter };
        this.emitter = this.moduleRef.get(EventEmitter2, { strict: false }) ?? null;
      } catch {
        // not installed, or its module not imported: the rxjs stream only
      }
    }
    return this.emitter ?? undefined;
  }
}
