import { Inject, Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Subscription } from 'rxjs';
import { storeCallsOf } from '../../store/store-call-observers';
import { DenyReason } from '../../permits/deny-reason';
import { GatekeeperEvents, type GatekeeperEvent } from '../signals/gatekeeper-events';
import { GATEKEEPER_BACKENDS, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ModuleBackends } from '../gatekeeper-stores.factory';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import type { ResolvedMetricsOptions } from '../options/metrics.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { TasksRuntime } from '../tasks/tasks.runtime';
import { SchedulesRuntime } from '../schedules/schedules.runtime';
import { consecutiveFailures } from '../../schedules/job-history.rules';
import { invalidOption } from '../../core/errors/input.errors';

/** What one module (a node) reports; gauges ask every node registered in the process. */
interface MetricsSource {
  readonly node: string;
  /** Permits held by running work here, by semaphore. */
  heldPermits(): Map<string, number>;
  /** When a job last finished here (epoch ms), by semaphore and job. */
  readonly lastRuns: Map<string, { semaphore: string; job: string; at: number }>;
  /** When a job last completed here (epoch ms), by semaphore and job. */
  readonly lastSuccesses: Map<string, { semaphore: string; job: string; at: number }>;
  readonly leading: Map<string, boolean>;
  readonly owned: Map<string, Set<string>>;
  /** Each job's failed runs in a row on any node, as the history this node last wrote or read has them. */
  failureStreaks(): Array<{ semaphore: string; job: string; failures: number }>;
  /** Task counts by type and state (cached), or `undefined` when this node has no tasks connected. */
  taskCounts(): Promise<Record<string, Record<string, number>> | undefined>;
  now(): number;
}

/** The instruments of one registry and prefix, created once per process (a second module reuses them). */
interface Instruments {
  readonly attempts: PromClient.Counter<'node' | 'semaphore'>;
  readonly granted: PromClient.Counter<'node' | 'semaphore' | 'outcome'>;
  readonly denied: PromClient.Counter<'node' | 'semaphore' | 'reason'>;
  readonly runs: PromClient.Histogram<'node' | 'semaphore' | 'job' | 'outcome'>;
  readonly leaseLosses: PromClient.Counter<'node' | 'kind'>;
  readonly skipped: PromClient.Counter<'node' | 'semaphore' | 'job' | 'reason'>;
  readonly missed: PromClient.Counter<'node' | 'semaphore' | 'job'>;
  readonly lateness: PromClient.Histogram<'node' | 'semaphore' | 'job'>;
  readonly storeCalls: PromClient.Histogram<'node' | 'store' | 'outcome'>;
  readonly sources: Set<MetricsSource>;
}

/** The `semaphore` label of decisions on names the store has no entry of (unknown semaphores, typos, names built from input). */
export const UNDEFINED_SEMAPHORE_LABEL = '(undefined)';

const instrumentsByRegistry = new WeakMap<object, Map<string, Instruments>>();

/**
 * Prometheus metrics of this node (module option `metrics`), through `prom-client`, an optional peer loaded only
 * when metrics are on. Every metric carries the node's acquirer name as `node`; instruments are registered once per
 * registry and prefix in the process, so several modules (tests, several apps) share them. Used inside the module.
 */
@Injectable()
export class GatekeeperMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly stops: Array<() => void> = [];
  private source?: MetricsSource;
  private instruments?: Instruments;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    private readonly runtime: PermitsRuntime,
    private readonly events: GatekeeperEvents,
    private readonly tasks: TasksRuntime,
    private readonly schedules: SchedulesRuntime,
    @Optional() @Inject(GATEKEEPER_BACKENDS) private readonly backends?: ModuleBackends,
  ) {}

  /** Registers the instruments (once per process) and starts counting. */
  onModuleInit(): void {
    const settings = this.options.metrics;
    if (!settings) return;
    const instruments = instrumentsFor(loadPromClient(), settings);
    this.instruments = instruments;
    const node = this.options.holder.acquirer;
    const source = this.newSource(node, settings);
    this.source = source;
    instruments.sources.add(source);
    this.stops.push(() => instruments.sources.delete(source));
    this.stops.push(this.runtime.onDecision((result) => {
      const semaphore = result.granted ? result.permit.semaphore : this.semaphoreLabel(result.semaphore, result.reason);
      instruments.attempts.inc({ node, semaphore });
      if (result.granted) instruments.granted.inc({ node, semaphore, outcome: result.outcome });
      else instruments.denied.inc({ node, semaphore, reason: result.reason });
    }));
    const subscription: Subscription = this.events.stream.subscribe((event) => this.onEvent(event, node, source, instruments));
    this.stops.push(() => subscription.unsubscribe());
    const taskEvents = this.tasks.events.subscribe((event) => {
      if (event.kind === 'rejected') instruments.leaseLosses.inc({ node, kind: 'task' });
    });
    this.stops.push(() => taskEvents.unsubscribe());
    // Every backend's calls, measured alike above the backends (one backend may hold several capabilities' state).
    for (const backend of new Set(Object.values(this.backends?.of ?? {}))) {
      this.stops.push(storeCallsOf(backend).listen((call) => instruments.storeCalls.observe({ node, store: call.store, outcome: call.outcome }, call.durationMs / 1000)));
    }
    this.logger.log(`Metrics: registered with prefix ${settings.prefix}`);
  }

  /** Stops counting; this node's gauges leave the registry's output. */
  onModuleDestroy(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  /**
   * The `semaphore` label of a denial: the name when the store holds (or held) an entry under it or a value it
   * cannot read, else {@link UNDEFINED_SEMAPHORE_LABEL}. Every label set is a series prom-client keeps for ever, and
   * callers may build names from input: labels follow the definitions written, not the names asked for.
   */
  private semaphoreLabel(semaphore: string, reason: DenyReason): string {
    return reason === DenyReason.CORRUPT_STATE || this.runtime.notices.hasEntry(semaphore) ? semaphore : UNDEFINED_SEMAPHORE_LABEL;
  }

  private onEvent(event: GatekeeperEvent, node: string, source: MetricsSource, instruments: Instruments): void {
    switch (event.name) {
      case 'gatekeeper.job.started':
        // A scheduled tick's start, against the instant it is for (catch-ups are late by design; runs now have none).
        if (event.trigger === 'schedule' && event.instant !== undefined) instruments.lateness.observe({ node, semaphore: event.semaphore, job: event.job }, Math.max(0, event.at - event.instant) / 1000);
        break;
      case 'gatekeeper.job.finished':
      case 'gatekeeper.job.failed':
        if (event.name === 'gatekeeper.job.finished') source.lastSuccesses.set(`${event.semaphore}\u0000${event.job}`, { semaphore: event.semaphore, job: event.job, at: event.at });
        instruments.runs.observe({ node, semaphore: event.semaphore, job: event.job, outcome: event.name === 'gatekeeper.job.finished' ? 'finished' : event.outcome === 'replaced' ? 'replaced' : 'failed' }, event.durationMs / 1000);
        source.lastRuns.set(`${event.semaphore}\u0000${event.job}`, { semaphore: event.semaphore, job: event.job, at: event.at });
        break;
      case 'gatekeeper.permit.lost':
        instruments.leaseLosses.inc({ node, kind: 'permit' });
        break;
      case 'gatekeeper.job.skipped':
        instruments.skipped.inc({ node, semaphore: event.semaphore, job: event.job, reason: event.reason });
        break;
      case 'gatekeeper.job.missed':
        instruments.missed.inc({ node, semaphore: event.semaphore, job: event.job });
        break;
      case 'gatekeeper.leader.elected':
        source.leading.set(event.election, true);
        break;
      case 'gatekeeper.leader.lost':
        source.leading.set(event.election, false);
        instruments.leaseLosses.inc({ node, kind: 'leader' });
        break;
      case 'gatekeeper.resource.assigned': {
        const owned = source.owned.get(event.allocation) ?? new Set<string>();
        for (const resource of event.resources) owned.add(resource);
        source.owned.set(event.allocation, owned);
        break;
      }
      case 'gatekeeper.resource.revoked':
        for (const resource of event.resources) source.owned.get(event.allocation)?.delete(resource);
        break;
      default:
    }
  }

  private newSource(node: string, settings: ResolvedMetricsOptions): MetricsSource {
    const { clock } = this.options;
    let counts: { at: number; value: Record<string, Record<string, number>> } | undefined;
    let reading: Promise<void> | undefined;
    const read = () => {
      reading ??= this.tasks.countsIfConnected()
        .then((value) => {
          counts = value === undefined ? undefined : { at: clock.now(), value };
        }, (error: unknown) => this.logger.warn(`Metrics: reading task counts failed: ${(error as Error).message}`))
        .finally(() => {
          reading = undefined;
        });
      return reading;
    };
    return {
      node,
      heldPermits: () => {
        const held = new Map<string, number>();
        for (const lease of this.runtime.decisions.leases) held.set(lease.permit.semaphore, (held.get(lease.permit.semaphore) ?? 0) + 1);
        return held;
      },
      lastRuns: new Map(),
      lastSuccesses: new Map(),
      leading: new Map([...this.options.elections.keys()].map((name) => [name, false])),
      owned: new Map(),
      failureStreaks: () => this.schedules.jobs.all().flatMap((job) => {
        const history = this.schedules.recorder.cached(job.name);
        return history ? [{ semaphore: job.options.semaphore, job: job.name, failures: consecutiveFailures(history) }] : [];
      }),
      // One listing of every task at most every taskCountsInterval: the first scrape waits for it, later ones do not.
      taskCounts: async () => {
        if (!counts) await read();
        else if (clock.now() - counts.at >= settings.taskCountsMs) void read();
        return counts?.value;
      },
      now: () => clock.now(),
    };
  }
}

/** prom-client, from where the app installed it; a clear error when metrics are on without it. */
function loadPromClient(): typeof PromClient {
  try {
    return createRequire(__filename)('prom-client') as typeof PromClient;
  } catch (error) {
    throw invalidOption('metrics', `on, but prom-client cannot be loaded (npm install prom-client): ${(error as Error).message}`);
  }
}

/** The instruments of `settings.registry` (or prom-client's global one) and prefix: created the first time only. */
function instrumentsFor(prom: typeof PromClient, settings: ResolvedMetricsOptions): Instruments {
  const registry = (settings.registry ?? prom.register) as PromClient.Registry;
  const byPrefix = instrumentsByRegistry.get(registry) ?? new Map<string, Instruments>();
  instrumentsByRegistry.set(registry, byPrefix);
  const name = (suffix: string) => `${settings.prefix}${suffix}`;
  const existing = byPrefix.get(settings.prefix);
  // Reused while still registered (a registry.clear() since, as tests do, drops them: they are made again).
  if (existing && registry.getSingleMetric(name('permit_attempts_total')) === existing.attempts) return existing;
  const sources = new Set<MetricsSource>();
  const registers = [registry];
  const each = async <T>(fn: (source: MetricsSource) => T | Promise<T>) => Promise.all([...sources].map(fn));
  const instruments: Instruments = {
    sources,
    attempts: new prom.Counter({ name: name('permit_attempts_total'), help: 'Permit decisions asked for (acquire or refresh, by a job or by hand)', labelNames: ['node', 'semaphore'], registers }),
    granted: new prom.Counter({
      name: name('permit_granted_total'), help: 'Permit decisions that granted: a new permit (granted), a refresh written (refreshed), or one still fresh (held)', labelNames: ['node', 'semaphore', 'outcome'], registers,
    }),
    denied: new prom.Counter({ name: name('permit_denied_total'), help: 'Permit decisions that denied, by reason', labelNames: ['node', 'semaphore', 'reason'], registers }),
    runs: new prom.Histogram({
      name: name('job_run_duration_seconds'), help: 'How long @ClusterSingleton jobs ran here', labelNames: ['node', 'semaphore', 'job', 'outcome'], buckets: [...settings.runBuckets], registers,
    }),
    leaseLosses: new prom.Counter({
      name: name('lease_lost_total'), help: 'Leases lost before their work ended: a permit refresh denied, leadership lost, a task run whose outcome was refused', labelNames: ['node', 'kind'], registers,
    }),
    skipped: new prom.Counter({
      name: name('job_ticks_skipped_total'), help: 'Ticks of @ClusterSingleton jobs that did not run here, by reason (a deny reason, or OVERLAP)', labelNames: ['node', 'semaphore', 'job', 'reason'], registers,
    }),
    missed: new prom.Counter({
      name: name('job_instants_missed_total'), help: 'Scheduled instants of a job that ran on no node, judged missed by this node (summed over nodes: the cluster\'s count)', labelNames: ['node', 'semaphore', 'job'], registers,
    }),
    lateness: new prom.Histogram({
      name: name('job_start_lateness_seconds'), help: 'How long after its scheduled instant a tick of a job started here', labelNames: ['node', 'semaphore', 'job'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers,
    }),
    storeCalls: new prom.Histogram({
      name: name('store_call_duration_seconds'), help: 'Calls to the store (round trips) by capability, how long they took and how they ended', labelNames: ['node', 'store', 'outcome'], buckets: [...settings.callBuckets], registers,
    }),
  };
  new prom.Gauge({
    name: name('permits_held'), help: 'Permits held by work running here, by semaphore', labelNames: ['node', 'semaphore'], registers,
    async collect() {
      this.reset();
      await each((source) => {
        for (const [semaphore, count] of source.heldPermits()) this.set({ node: source.node, semaphore }, count);
      });
    },
  });
  new prom.Gauge({
    name: name('job_seconds_since_last_run'), help: 'Seconds since a job last finished (or failed) here', labelNames: ['node', 'semaphore', 'job'], registers,
    async collect() {
      this.reset();
      await each((source) => {
        for (const { semaphore, job, at } of source.lastRuns.values()) this.set({ node: source.node, semaphore, job }, (source.now() - at) / 1000);
      });
    },
  });
  new prom.Gauge({
    name: name('job_last_success_timestamp_seconds'), help: 'When a job last completed here (Unix seconds; max over nodes: when it last completed anywhere)', labelNames: ['node', 'semaphore', 'job'], registers,
    async collect() {
      this.reset();
      await each((source) => {
        for (const { semaphore, job, at } of source.lastSuccesses.values()) this.set({ node: source.node, semaphore, job }, at / 1000);
      });
    },
  });
  new prom.Gauge({
    name: name('job_consecutive_failures'),
    help: 'Failed runs of a job in a row, newest first, on any node, as the run history this node last wrote or read has them (0 after a completed run; aggregate with max)',
    labelNames: ['node', 'semaphore', 'job'], registers,
    async collect() {
      this.reset();
      await each((source) => {
        for (const { semaphore, job, failures } of source.failureStreaks()) this.set({ node: source.node, semaphore, job }, failures);
      });
    },
  });
  new prom.Gauge({
    name: name('leader'), help: '1 while this node leads the election, else 0', labelNames: ['node', 'election'], registers,
    async collect() {
      this.reset();
      await each((source) => {
        for (const [election, leading] of source.leading) this.set({ node: source.node, election }, leading ? 1 : 0);
      });
    },
  });
  new prom.Gauge({
    name: name('allocation_resources'), help: 'Resources of an allocation this node owns', labelNames: ['node', 'allocation'], registers,
    async collect() {
      this.reset();
      await each((source) => {
        for (const [allocation, owned] of source.owned) this.set({ node: source.node, allocation }, owned.size);
      });
    },
  });
  new prom.Gauge({
    name: name('tasks'), help: 'Tasks in the cluster by type and state (every node reports the same: aggregate with max)', labelNames: ['node', 'type', 'state'], registers,
    async collect() {
      this.reset();
      await each(async (source) => {
        for (const [type, states] of Object.entries((await source.taskCounts()) ?? {})) {
          for (const [state, count] of Object.entries(states)) this.set({ node: source.node, type, state }, count);
        }
      });
    },
  });
  byPrefix.set(settings.prefix, instruments);
  return instruments;
}
