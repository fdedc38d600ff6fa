import type { Clock } from '../core/clock';
import type { SemaphoreAdmin } from '../permits/semaphore-admin';
import { resolveJobPolicy } from './job-policy';
import type { RunLog } from './run/run-log';
import type { JobCalendar, JobRunPolicy, ScheduledJob } from './run/scheduled-job';
import { ScheduleCatalog } from './schedule-catalog';
import type { ScheduleDefinition } from './schedule-definition';
import { healthInput } from './schedule-definition.validator';
import type { LiveScheduleRecord, ScheduleRecord } from './schedule-record';
import { describeRestore, restoreSchedules } from './schedule-restore';
import type { ScheduleStore } from './schedule-store';
import { ScheduleView, type ScheduleChange } from './schedule-view';
import { invalidSchedule } from './errors/schedule.errors';

/** The longest delay a Node timer takes (about 24.8 days): a later fire instant is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How early a timer may fire and still count as its instant's (timer rounding). */
const EARLY_MS = 5;

/** A runtime schedule's job as this node runs it: the `@ClusterSingleton` policy, by the decorators' one rule. */
export interface ArmedJob extends ScheduledJob {
  readonly options: JobRunPolicy & { readonly durationMs: number | undefined };
}

/** What the runtime schedules of a node stand on. */
export interface ArmedSchedulesParts {
  readonly store: ScheduleStore;
  /** The handlers this node has, by name (`@ScheduleHandler`): read once, at start. */
  handlers(): ReadonlyMap<string, (data: unknown) => unknown>;
  /** The calendar of a cron expression in a zone (the app's cron package), or why it cannot be read here. */
  calendar(expression: string, timeZone: string): JobCalendar | string;
  /** What is wrong with an expression in a zone, or `undefined` when it fires (the catalog's check). */
  validateCron(expression: string, timeZone: string): string | undefined;
  /** Where the job of a schedule this node takes part in is registered while it does. */
  readonly jobs: { put(job: ArmedJob): void; delete(name: string): void };
  /** Runs one tick of a job through the run pipeline. */
  tick(job: ArmedJob): Promise<unknown>;
  /** The semaphores a schedule's definition keeps defined. */
  readonly semaphores: Pick<SemaphoreAdmin, 'list' | 'put'>;
  /** This node's acquirer name: who wrote an edit. */
  readonly by: string;
  readonly clock: Clock;
  readonly storeTimeoutMs: number;
  readonly clockSkewMs: number;
  readonly log: RunLog;
  /** Told when the store fails a read, and when it answers again. */
  readonly outage: { failed(message: string): void; succeeded(): void };
}

/** A runtime schedule this node takes part in: its timer and what a tick runs. */
interface Armed {
  readonly record: LiveScheduleRecord;
  timer?: NodeJS.Timeout;
}

/**
 * Schedules defined at runtime, on this node: the catalog every change goes through (compare-and-set by id), a
 * view of the cluster's schedules fed by the store's change feed and listed again when it says changes may have been
 * missed (no poll of its own), and a timer per schedule whose handler this node has (armed). A tick takes the
 * `@ClusterSingleton` path (the runner) under the schedule's semaphore, so it is decided, recorded and steered like a
 * decorated job; its job name is the schedule's id. An edit re-arms the timer when the view hears of it (its event,
 * or the re-read after missed changes).
 */
export class ArmedSchedules {
  readonly catalog: ScheduleCatalog;
  private readonly view: ScheduleView;
  private handlers: ReadonlyMap<string, (data: unknown) => unknown> = new Map();
  private readonly armed = new Map<string, Armed>();
  private started?: Promise<void>;
  private stopped = false;

  constructor(private readonly parts: ArmedSchedulesParts) {
    const { store, by, clock, storeTimeoutMs, clockSkewMs, log, outage } = parts;
    this.catalog = new ScheduleCatalog(store, { by, clock, validateCron: parts.validateCron, timeoutMs: storeTimeoutMs, skewMs: clockSkewMs });
    this.view = new ScheduleView(store, {
      callTimeoutMs: storeTimeoutMs,
      onError: (error) => outage.failed((error as Error).message),
      onListenerError: (error) => log.error(`Runtime schedules: arming a changed schedule failed: ${(error as Error).message}`),
      onResynced: () => outage.succeeded(),
      restore: (vanished) => this.restore(vanished),
    });
  }

  /** Finds the handlers, reads every schedule, and arms those this node has a handler for. */
  start(): Promise<void> {
    this.started ??= this.open();
    return this.started;
  }

  /** The catalog, once {@link start} is done (a service call made before start-up finished waits for it). */
  async ready(): Promise<ScheduleCatalog> {
    await this.start();
    return this.catalog;
  }

  async drain(): Promise<void> {
    this.stopped = true;
    for (const armed of this.armed.values()) clearTimeout(armed.timer);
  }

  async stop(): Promise<void> {
    await this.drain();
    if (!this.started) return;
    this.view.close();
    await this.parts.store.close();
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
    this.handlers = this.parts.handlers();
    await this.parts.store.connect();
    this.view.onChange((change) => this.apply(change));
    await this.view.start();
    for (const record of this.view.schedules()) this.arm(record);
  }

  /**
   * Writes back the schedules this node held that the store lost (a Hazelcast cluster restarted empty), and says so
   * once: a warning naming what came back, an ERROR naming what could not.
   */
  private async restore(vanished: ScheduleRecord[]): Promise<void> {
    const { store, storeTimeoutMs, log } = this.parts;
    const report = await restoreSchedules(store, vanished, storeTimeoutMs);
    const said = describeRestore(report);
    if (said) log[said.level](said.message);
    if (report.deletedOutside.length > 0) log.warn(`Runtime schedules deleted from the store outside the library (not restored): ${report.deletedOutside.join(', ')}`);
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
    const trigger = this.parts.calendar(definition.cron, definition.timeZone);
    if (typeof trigger === 'string') {
      this.parts.log.warn(`runtime schedule ${definition.id}: ${trigger}; not armed here`);
      return;
    }
    const job: ArmedJob = { name: definition.id, options: permitOptions(definition), trigger, invoke: () => handler(definition.data), paused: definition.paused === true };
    this.parts.jobs.put(job);
    const armed: Armed = { record };
    this.armed.set(definition.id, armed);
    void this.defineSemaphore(definition);
    // A paused schedule ticks too: each tick is noted `paused` in the slot ledger (and runs nothing), so the instants
    // of a pause are never judged missed.
    this.schedule(armed, trigger, () => this.parts.tick(job));
  }

  private disarm(id: string): void {
    const armed = this.armed.get(id);
    if (!armed) return;
    clearTimeout(armed.timer);
    this.armed.delete(id);
    this.parts.jobs.delete(id);
  }

  /** Sets the timer for the next fire instant, and again after each tick. */
  private schedule(armed: Armed, trigger: JobCalendar, call: () => Promise<unknown>, after = this.parts.clock.now()): void {
    const { clock } = this.parts;
    const now = clock.now();
    const [next] = trigger.next(Math.max(now, after), 1);
    const fire = () => {
      if (this.armed.get(armed.record.id) !== armed || this.stopped) return;
      // A long wait goes in steps; a timer that fires a little early still fires for `next`, and the one after it is
      // counted from `next`, never from the early clock (which would name `next` again).
      if (clock.now() < next - EARLY_MS) return this.schedule(armed, trigger, call, after);
      this.schedule(armed, trigger, call, next);
      call().catch((error: unknown) => this.parts.log.error(`runtime schedule ${armed.record.id}: ${(error as Error).message}`));
    };
    armed.timer = setTimeout(fire, Math.min(MAX_TIMER_MS, Math.max(0, next - now)));
    armed.timer.unref();
  }

  /** The schedule's semaphore as its definition says (one compare-and-set when it differs; every node converges). */
  private async defineSemaphore(definition: ScheduleDefinition): Promise<void> {
    const { semaphores, log } = this.parts;
    const current = semaphores.list().find((d) => d.name === definition.semaphore);
    const wanted = { permits: definition.permits, durationMs: definition.durationMs, groupPattern: definition.groupPattern, acquirerPattern: definition.acquirerPattern };
    if (current && current.permits === wanted.permits && current.durationMs === wanted.durationMs
      && current.groupPattern === wanted.groupPattern && current.acquirerPattern === wanted.acquirerPattern) return;
    try {
      await semaphores.put({ name: definition.semaphore, permits: wanted.permits, duration: wanted.durationMs, groupPattern: wanted.groupPattern, acquirerPattern: wanted.acquirerPattern });
    } catch (error) {
      log.warn(`runtime schedule ${definition.id}: its semaphore "${definition.semaphore}" could not be defined: ${(error as Error).message}`);
    }
  }
}

/** The `@ClusterSingleton` options a runtime schedule's ticks run with: its policy, by the decorators' one rule. */
function permitOptions(definition: ScheduleDefinition): ArmedJob['options'] {
  const { overlap, replaceWaitMs, missedRuns, catchUpWindowMs } = definition;
  const health = definition.health && healthInput(definition.health);
  const policy = resolveJobPolicy({ overlap, replaceWait: replaceWaitMs, missedRuns, catchUpWindow: catchUpWindowMs, health }, (field, reason) => {
    throw invalidSchedule(definition.id, field, reason); // validated when written: not seen
  });
  return { semaphore: definition.semaphore, durationMs: definition.durationMs, ...policy, oncePerInstant: true, ...(definition.checkIn && { checkIn: definition.checkIn }) };
}
