import { Inject, Injectable } from '@nestjs/common';
import { firstValueFrom, filter, map, timeout as rxTimeout, type Observable, startWith } from 'rxjs';
import { parseDuration, type DurationInput } from '../../core/duration';
import type { ClusterChange } from '../../elections/cluster-change';
import { DEFAULT_ELECTION, type Leader } from '../../elections/election';
import { WaitTimeoutError } from '../../permits/errors/wait-timeout.error';
import { GatekeeperError } from '../../core/errors/gatekeeper.error';
import type { LeaderLease } from '../../elections/leader-lease';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { leaderContext } from '../../elections/leader-work';
import { ElectionsRuntime, type LeaderWork } from './elections.runtime';
import { PresenceRuntime } from '../presence/presence.runtime';
import type { Presence } from '../../presence/presence';

/** The answer of {@link ClusterService.status}: the seed's `ClusterStatus`, from this node's view. */
export interface ClusterStatus {
  /** The election asked about. */
  readonly election: string;
  /** This instance, once announced (with membership off: `undefined`). */
  readonly current: Presence | undefined;
  /** The leader, or `undefined` while nobody leads. */
  readonly leader: Leader | undefined;
  /** The leader's entry among the participants, when it announces itself. */
  readonly leaderParticipant: Presence | undefined;
  /** Whether this node is the leader (its own lease: exact, not a view). */
  readonly isLeader: boolean;
  /** The live app instances, oldest first (the same order on every node). */
  readonly participants: Presence[];
  /** The leader's epoch (fencing token), or `undefined` while nobody leads. */
  readonly epoch: number | undefined;
}

/**
 * Who is here and who leads (the seed's `ClusterService`): the live app instances of the cluster (presence, not
 * Hazelcast members) and the leader of each election this node stands in. Everything is served from this node's
 * view, with no round trip: whether this node leads is exact (its own lease); who else leads is what the last event
 * or read showed (a missed handover is seen at the latest when the old leader's lease lapses, one lease plus the
 * skew bound), and who is here is as fresh as the store's change feed: a lost event is read again when the feed says
 * so (within two `listenCheckMs` on PostgreSQL and Redis) or every 5 s on Hazelcast, and an instance that stops renewing
 * drops out at its entry's expiry.
 *
 * @example
 * ```ts
 * @Cron(CronExpression.EVERY_30_SECONDS)
 * distributeEvents() {
 *   if (!this.cluster.isLeader()) return;
 *   ...
 * }
 * ```
 */
@Injectable()
export class ClusterService {
  /** @internal Nest injects the service; applications never construct it. */
  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    private readonly membership: PresenceRuntime,
    private readonly elections: ElectionsRuntime,
  ) {}

  /** The live app instances, oldest first (the same order on every node). Empty with membership off. */
  participants(): Presence[] {
    return this.membership.participants();
  }

  /** This instance's own entry among {@link ClusterService.participants}, once announced. */
  current(): Presence | undefined {
    return this.membership.current();
  }

  /** Acquirer names more than one live instance uses, with those instances. */
  nameClashes(): Map<string, Presence[]> {
    return this.membership.nameClashes();
  }

  /** Whether presence is on. */
  get enabled(): boolean {
    return this.membership.enabled;
  }

  /** How long ago the cluster last confirmed this node's presence view (`undefined` before it first did, or with membership off). */
  viewAgeMs(): number | undefined {
    return this.membership.viewAgeMs();
  }

  /**
   * The seed's cluster status for `election` (default `'leader'`): this instance, the leader and its epoch, and
   * the participants. Throws `NotFoundError` for an election this node does not stand in.
   */
  status(election: string = DEFAULT_ELECTION): ClusterStatus {
    const leader = this.elections.leader(election);
    const participants = this.participants();
    return {
      election,
      current: this.current(),
      leader,
      leaderParticipant: leader && participants.find((p) => p.instance === leader.instance),
      isLeader: this.elections.lease(election) !== undefined,
      participants,
      epoch: leader?.epoch,
    };
  }

  /** Whether this node leads `election` now (default `'leader'`): its own lease, valid and not past its renew deadline. */
  isLeader(election: string = DEFAULT_ELECTION): boolean {
    return this.elections.lease(election) !== undefined;
  }

  /** The leader of `election` as this node knows it (itself while it leads, else its view), or `undefined`. */
  leader(election: string = DEFAULT_ELECTION): Leader | undefined {
    return this.elections.leader(election);
  }

  /**
   * This node's leadership of `election` while it leads: its epoch (fencing token), a `signal` that fires when it
   * ends, and `assertValid()` to call before each side effect. `undefined` when it does not lead.
   */
  leadership(election: string = DEFAULT_ELECTION): LeaderLease | undefined {
    return this.elections.lease(election);
  }

  /** The leadership lease of the `@LeaderOnly` method or `whileLeader` work running now (async context), if any. */
  currentLeadership(): LeaderLease | undefined {
    return leaderContext.getStore();
  }

  /**
   * Leader elected / lost (this node), leader changed (any node, as this node's view sees it) and participant
   * joined / left. Hot: subscribers see changes from the moment they subscribe; read {@link ClusterService.status} for the state.
   */
  changes(): Observable<ClusterChange> {
    return this.elections.changes();
  }

  /**
   * Resolves with the leader of `election` once there is one (at once if there is), or rejects with
   * a `WaitTimeoutError` (`kind: 'leader'`) after `timeout` (default `'30s'`).
   */
  async waitForLeader({ election = DEFAULT_ELECTION, timeout = '30s' }: { election?: string; timeout?: DurationInput } = {}): Promise<Leader> {
    const timeoutMs = parseDuration(timeout, election, 'timeout');
    const now = this.leader(election);
    if (now) return now;
    const leader = await firstValueFrom(
      this.changes().pipe(
        startWith(undefined),
        map(() => this.leader(election)),
        filter((found): found is Leader => found !== undefined),
        rxTimeout({ first: timeoutMs, with: () => { throw new WaitTimeoutError('leader', election, timeoutMs); } }),
      ),
      { defaultValue: undefined },
    );
    if (!leader) throw new GatekeeperError(`Election "${election}": the module shut down while waiting for a leader`);
    return leader;
  }

  /**
   * Runs `work(lease)` each time this node becomes leader of `election` (default `'leader'`), for leader-only
   * background work: start it there, and stop it when `lease.signal` fires (this node stopped being leader). At
   * shutdown, leadership is released only after the work returned (up to `shutdownTimeout`), so a clean handover
   * never overlaps. Joins the election if this node does not stand in it yet. Returns the unsubscribe.
   */
  whileLeader(work: (lease: LeaderLease) => unknown): () => void;
  /** Runs `work(lease)` each time this node becomes leader of `election`; see the overload without an election. */
  whileLeader(election: string, work: (lease: LeaderLease) => unknown): () => void;

  whileLeader(electionOrWork: string | LeaderWork, work?: LeaderWork): () => void {
    return typeof electionOrWork === 'string' ? this.elections.whileLeader(electionOrWork, work!) : this.elections.whileLeader(DEFAULT_ELECTION, electionOrWork);
  }

  /** Steps down from `election` if this node leads it, and stands back one renewal so another node takes over. Whether it led. */
  resign(election: string = DEFAULT_ELECTION): Promise<boolean> {
    return this.elections.resign(election);
  }

  /** The elections this node stands in. */
  electionNames(): string[] {
    return this.elections.elections();
  }

  /** This node's identity, for messages. */
  get instanceId(): string {
    return this.options.holder.instance;
  }
}
