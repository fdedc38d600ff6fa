import { Inject, Injectable } from '@nestjs/common';
import type { PermitStore } from '../../permits/permit-store';
import { GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsStartup } from '../permits/permits.startup';
import { PresenceRuntime } from '../presence/presence.runtime';
import type { GatekeeperPhase } from '../../permits/permit-decisions';
import { PermitsRuntime } from '../permits/permits.runtime';
import { ScheduleService } from '../schedules/schedule.service';
import type { DurationInput } from '../../core/duration';
import { judgeJob, jobHealthWithin, type JobHealthDetails } from '../../schedules/job-health.rules';

/** What the gatekeeper knows of its own health on this node. */
export interface GatekeeperHealthDetails {
  /** Where the module is in its life: permits are decided only while `ready`. */
  readonly phase: GatekeeperPhase;
  /** Whether the store is reachable and trusted (a memory store always is). */
  readonly connected: boolean;
  /** Cluster members this node sees (absent for the memory store). */
  readonly members?: number;
  /** The `quorum` option, and whether the members seen meet it (absent without a quorum). */
  readonly quorum?: { readonly required: number; readonly met: boolean };
  /**
   * Live app instances, as presence confirms them (absent when presence is off or its view is not confirmed yet):
   * `acquirer (group)` each.
   */
  readonly participants?: readonly string[];
  /** Semaphores this node uses that none of the live instances can run (their patterns admit none; not paused). */
  readonly runsNowhere: readonly string[];
  /** Semaphores this node uses that are paused (no permits): they run nowhere on purpose. */
  readonly paused: readonly string[];
  /** Why the check is down, when it is. */
  readonly message?: string;
}

/**
 * The result shape `@nestjs/terminus` (11 and later) takes from a health indicator: the key, with `up` or `down`
 * and the details. It is plain data, so the library needs no import of Terminus (an optional peer).
 */
export type GatekeeperHealthResult<Key extends string = string> = Record<Key, GatekeeperHealthDetails & { readonly status: 'up' | 'down' }>;

/**
 * Health of the gatekeeper on this node, for `@nestjs/terminus` (`HealthCheckService.check([() => health.readiness()])`)
 * or any probe of your own. Which check goes where:
 *
 * - {@link GatekeeperHealthIndicator.readiness}, for a readiness probe: down until the module started, while the store is unreachable, below
 *   `quorum`, and during shutdown. A node that is not ready decides no permit, so traffic that needs one should go
 *   elsewhere; a restart would not help it.
 * - {@link GatekeeperHealthIndicator.liveness}, for a liveness probe: down only when the module can no longer recover by itself (a start in the
 *   background gave up). A cluster outage leaves it up: restarting every replica does not bring the cluster back.
 * - {@link GatekeeperHealthIndicator.jobs}, for monitoring and alerts, not probes: down while a semaphore this node uses can run nowhere.
 */
@Injectable()
export class GatekeeperHealthIndicator {
  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly runtime: PermitsRuntime,
    private readonly membership: PresenceRuntime,
    private readonly startup: PermitsStartup,
    private readonly schedules: ScheduleService,
  ) {}

  /** What this node knows of its health now (read from its own view: no call to the cluster). */
  details(): GatekeeperHealthDetails {
    const members = this.store.memberCount();
    const live = this.membership.enabled ? this.membership.confirmedParticipants() : undefined;
    const { quorum } = this.options;
    return {
      phase: this.runtime.phase,
      connected: this.store.isConnected(),
      ...(members !== undefined && { members }),
      ...(quorum !== undefined && { quorum: { required: quorum, met: (members ?? Infinity) >= quorum } }),
      ...(live && { participants: live.map((p) => `${p.acquirer} (${p.group})`) }),
      runsNowhere: live && live.length > 0 ? this.startup.runsNowhere(live).map((d) => d.name) : [],
      paused: this.startup.paused(),
    };
  }

  /** Readiness: up while the module is started, its store reachable and the quorum met. */
  readiness<const Key extends string = 'gatekeeper'>(key: Key = 'gatekeeper' as Key): GatekeeperHealthResult<Key> {
    const details = this.details();
    const why = details.phase === 'starting' ? (this.runtime.startFailure ? `its start gave up: ${this.runtime.startFailure}` : 'it is starting')
      : details.phase !== 'ready' ? 'it is shutting down'
        : !details.connected ? 'its store is unreachable (or not trusted since a lost event; it resyncs)'
          : details.quorum && !details.quorum.met ? `${details.members} cluster member(s) seen, quorum is ${details.quorum.required}`
            : undefined;
    return result(key, details, why);
  }

  /** Liveness: down only when the module cannot recover without a restart (a background start that gave up). */
  liveness<const Key extends string = 'gatekeeper'>(key: Key = 'gatekeeper' as Key): GatekeeperHealthResult<Key> {
    const failure = this.runtime.startFailure;
    return result(key, this.details(), failure === undefined ? undefined : `its start gave up: ${failure}`);
  }

  /** Jobs: down while a semaphore this node uses can run on none of the live instances (for alerts, not probes). */
  jobs<const Key extends string = 'gatekeeper-jobs'>(key: Key = 'gatekeeper-jobs' as Key): GatekeeperHealthResult<Key> {
    const details = this.details();
    const nowhere = details.runsNowhere;
    return result(key, details, nowhere.length === 0 ? undefined : `no live instance can run ${nowhere.map((n) => `"${n}"`).join(', ')}`);
  }

  /**
   * One job, for monitoring and alerts (not probes): up while it completed a run within `within` anywhere in the
   * cluster (read from the cluster's run history: every node answers the same), or while it is paused; down with
   * when it last completed and what failed since. Throws `InvalidInputError` for a bad `within` (before any store
   * call) and `NotFoundError` for a job this node does not have.
   *
   * @example
   * ```ts
   * return this.health.check([() => this.gatekeeper.job('BillingJobs.nightly', { within: '26h' })]);
   * ```
   */
  async job<const Key extends string = 'gatekeeper-job'>(job: string, options: { readonly within: DurationInput; readonly key?: Key }): Promise<Record<Key, JobHealthDetails & { readonly status: 'up' | 'down' }>> {
    const withinMs = jobHealthWithin(job, options?.within);
    const judged = judgeJob(await this.schedules.describe(job), withinMs, this.options.clock.now());
    return { [options.key ?? 'gatekeeper-job']: judged } as Record<Key, JobHealthDetails & { readonly status: 'up' | 'down' }>;
  }
}

function result<Key extends string>(key: Key, details: GatekeeperHealthDetails, down: string | undefined): GatekeeperHealthResult<Key> {
  const value = down === undefined ? { status: 'up' as const, ...details } : { status: 'down' as const, ...details, message: down };
  return { [key]: value } as GatekeeperHealthResult<Key>;
}
