import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ScheduleDefinition } from '../../schedules/schedule-definition';
import { resolveJobPolicy } from '../../schedules/job-policy';
import { ScheduleCatalog } from '../../schedules/schedule-catalog';
import type { LiveScheduleRecord, ScheduleRecord } from '../../schedules/schedule-record';
import { describeRestore, restoreSchedules } from '../../schedules/schedule-restore';
import type { ScheduleStore } from '../../schedules/schedule-store';
import { ScheduleView, type ScheduleChange } from '../../schedules/schedule-view';
import type { CapabilityRuntime } from '../capability.runtime';
import { GatekeeperExplorer } from '../gatekeeper.explorer';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_SCHEDULE_STORE, SCHEDULE_HANDLER_METADATA } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import { ClusterSingletonRunner } from './cluster-singleton.runner';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';
import { JobRegistry } from './job-registry';
import { OutageNotice } from '../signals/outage-notice';
import { invalidDecorator } from '../errors/decorator.errors';
import { invalidSchedule } from '../../schedules/errors/schedule.errors';

/** The longest delay a Node timer takes (about 24.8 days): a later fire instant is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How early a timer may fire and still count as its instant's (timer rounding). */
const EARLY_MS = 5;

/** A method decorated with `@ScheduleHandler`, found at startup. */
interface ScheduleHandlerMethod {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** The handler name schedules refer to. */
  readonly name: string;
  readonly instance: object;
  readonly method: object;
}

/** A runtime schedule this node takes part in: its timer and what a tick runs. */
interface Armed {
  readonly record: LiveScheduleRecord;
  timer?: NodeJS.Timeout;
}

/**
 * Schedules defined at runtime, on this node: the catalog every change goes through (compare-and-set by id), a
 * view of the cluster's schedules fed by the store's change feed and listed again when it says changes may have been
 * missed (no poll of its own), and a timer per
 * schedule whose handler this node has (`@ScheduleHandler`). A tick takes the `@ClusterSingleton` path (the
 * runner) under the schedule's semaphore, so it is decided, recorded and steered like a decorated job; its job
 * name is the schedule's id. An edit re-arms the timer when the view hears of it (its event, or the re-read after missed changes).
 * Used inside the module, not by applications.
 */
@Injectable()
export class RuntimeSchedules implements CapabilityRuntime {
  readonly catalog: ScheduleCatalog;
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly view: ScheduleView;
  private readonly handlers = new Map<string, ScheduleHandlerMethod>();
  private readonly armed = new Map<string, Armed>();
  private started?: Promise<void>;
  private stopped = false;
  private readonly outage = new OutageNotice(this.logger, 'Runtime schedules', 'armed schedules keep their last known definition, and changes are heard once it answers');

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_SCHEDULE_STORE) private readonly store: ScheduleStore,
    private readonly explorer: GatekeeperExplorer,
    private readonly jobs: JobRegistry,
    private readonly runner: ClusterSingletonRunner,
    private readonly permits: PermitsRuntime,
  ) {
    this.catalog = new ScheduleCatalog(store, {
      by: options.holder.acquirer,
      clock: options.clock,
      validateCron: (expression, timeZone) => CronTrigger.validate(expression, timeZone),
      timeoutMs: options.storeTimeoutMs,
      skewMs: options.clockSkewMs,
    });
    this.view = new ScheduleView(store, {
      callTimeoutMs: options.storeTimeoutMs,
      onError: (error) => this.outage.failed((error as Error).message),
      onListenerError: (error) => this.logger.error(`Runtime schedules: arming a changed schedule failed: ${(error as Error).message}`),
      onResynced: () => this.outage.succeeded(),
      restore: (vanished) => this.restore(vanished),
    });
  }

  /**
   * Writes back the schedules this node held that the store lost (a Hazelcast cluster restarted empty), and says so
   * once: a warning naming what came back, an ERROR naming what could not.
   */
  private async restore(vanished: ScheduleRecord[]): Promise<void> {
    const report = await restoreSchedules(this.store, vanished, this.options.storeTimeoutMs);
    const said = describeRestore(report);
    if (said) this.logger[said.level](said.message);
    if (report.deletedOutside.length > 0) this.logger.warn(`Runtime schedules deleted from the store outside the library (not restored): ${report.deletedOutside.join(', ')}`);
  }

  /** Finds the handlers, reads every schedule, and arms those this node has a handler for. */
  start(): Promise<void> {
    this.started ??= this.open();
    return this.started;
  }

  /** Waits for {@link start} (a service call made before start-up finished). */
  ready(): Promise<void> {
    return this.start();
  }

  async drain(): Promise<void> {
    this.stopped = true;
    for (const armed of this.armed.values()) clearTimeout(armed.timer);
  }

  async stop(): Promise<void> {
    await this.drain();
    if (!this.started) return;
    this.view.close();
    await this.store.close();
  }

  /** The schedules this node takes part in (it has their handler), by id. */
  armedIds(): string[] {
    return [...this.armed.keys()].sort();
  }

  /** Whether this node takes part in the schedule `id` (its job in the registry is that schedule's). */
  takesPart(id: string): boolean {
    return this.armed.has(id);
  }

  /** The live schedule `id` as this node's view has it, or `undefined`. */
  record(id: string): LiveScheduleRecord | undefined {
    return this.view.get(id);
  }

  /** Every live schedule as this node's view has it, sorted by id. */
  records(): LiveScheduleRecord[] {
    return this.view.schedules();
  }

  /**
   * Reads the cluster's schedules again, so that an edit this node just made shows in its answers at once rather than
   * when its event arrives. A failure is left to the feed (its event, or the re-read after missed changes).
   */
  async catchUp(): Promise<void> {
    await this.view.refresh().catch(() => undefined);
  }

  private async open(): Promise<void> {
    for (const { where, metadata: name, instance, method } of this.explorer.discover<string>(SCHEDULE_HANDLER_METADATA)) {
      const other = this.handlers.get(name);
      if (other) throw invalidDecorator(`@ScheduleHandler('${name}') on ${where}`, `${other.where} is already its handler (one per name)`);
      this.handlers.set(name, { where, name, instance, method });
    }
    await this.store.connect();
    this.view.onChange((change) => this.apply(change));
    await this.view.start();
    for (const record of this.view.schedules()) this.arm(record);
  }

  private apply(change: ScheduleChange): void {
    if (change.kind === 'removed') return this.disarm(change.previous.id);
    this.arm(change.schedule);
  }

  /** Takes part in `record` if this node has its handler: registers the job, keeps its semaphore defined, sets its timer. */
  private arm(record: LiveScheduleRecord): void {
    const { definition } = record;
    this.disarm(definition.id);
    const handler = this.handlers.get(definition.handler);
    if (!handler || this.stopped) return;
    const trigger = CronTrigger.fromExpression(definition.cron, definition.timeZone);
    if (typeof trigger === 'string') {
      this.logger.warn(`runtime schedule ${definition.id}: ${trigger}; not armed here`);
      return;
    }
    const options = permitOptions(definition);
    const job = { name: definition.id, options, trigger, invoke: () => (handler.method as (data: unknown) => unknown).call(handler.instance, definition.data), paused: definition.paused === true };
    this.jobs.put(job);
    const call = () => this.runner.run(job, { kind: 'tick' });
    const armed: Armed = { record };
    this.armed.set(definition.id, armed);
    void this.defineSemaphore(definition);
    if (!definition.paused) this.schedule(armed, trigger, call);
  }

  private disarm(id: string): void {
    const armed = this.armed.get(id);
    if (!armed) return;
    clearTimeout(armed.timer);
    this.armed.delete(id);
    this.jobs.delete(id);
  }

  /** Sets the timer for the next fire instant, and again after each tick. */
  private schedule(armed: Armed, trigger: CronTrigger, call: () => Promise<unknown>, after = this.options.clock.now()): void {
    const now = this.options.clock.now();
    const [next] = trigger.next(Math.max(now, after), 1);
    const fire = () => {
      if (this.armed.get(armed.record.id) !== armed || this.stopped) return;
      // A long wait goes in steps; a timer that fires a little early still fires for `next`, and the one after it is
      // counted from `next`, never from the early clock (which would name `next` again).
      if (this.options.clock.now() < next - EARLY_MS) return this.schedule(armed, trigger, call, after);
      this.schedule(armed, trigger, call, next);
      call().catch((error: unknown) => this.logger.error(`runtime schedule ${armed.record.id}: ${(error as Error).message}`));
    };
    armed.timer = setTimeout(fire, Math.min(MAX_TIMER_MS, Math.max(0, next - now)));
    armed.timer.unref();
  }

  /** The schedule's semaphore as its definition says (one compare-and-set when it differs; every node converges). */
  private async defineSemaphore(definition: ScheduleDefinition): Promise<void> {
    const current = this.permits.admin.list().find((d) => d.name === definition.semaphore);
    const wanted = { permits: definition.permits, durationMs: definition.durationMs, groupPattern: definition.groupPattern, acquirerPattern: definition.acquirerPattern };
    if (current && current.permits === wanted.permits && current.durationMs === wanted.durationMs
      && current.groupPattern === wanted.groupPattern && current.acquirerPattern === wanted.acquirerPattern) return;
    try {
      await this.permits.admin.put({ name: definition.semaphore, permits: wanted.permits, duration: wanted.durationMs, groupPattern: wanted.groupPattern, acquirerPattern: wanted.acquirerPattern });
    } catch (error) {
      this.logger.warn(`runtime schedule ${definition.id}: its semaphore "${definition.semaphore}" could not be defined: ${(error as Error).message}`);
    }
  }
}

/** The `@ClusterSingleton` options a runtime schedule's ticks run with: its policy, by the decorators' one rule. */
function permitOptions(definition: ScheduleDefinition): ResolvedClusterSingletonOptions {
  const { overlap, replaceWaitMs, missedRuns, catchUpWindowMs } = definition;
  const policy = resolveJobPolicy({ overlap, replaceWait: replaceWaitMs, missedRuns, catchUpWindow: catchUpWindowMs }, (field, reason) => {
    throw invalidSchedule(definition.id, field, reason); // validated when written: not seen
  });
  return { semaphore: definition.semaphore, durationMs: definition.durationMs, ...policy, oncePerInstant: true };
}
