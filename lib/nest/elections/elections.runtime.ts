import { GatekeeperEvents } from '../signals/gatekeeper-events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import type { ClusterChange } from '../../elections/cluster-change';
import { electionDefinition, electionOf, electionSemaphore, type Leader } from '../../elections/election';
import { leaderChange, leaderIn, leaderOf } from '../../elections/election.rules';
import { claimDedicated, ensureDefined } from '../../permits/dedicated-semaphore';
import { LeaderCandidate, candidatePermitsOf, type CandidatePermits } from '../../elections/leader-candidate';
import type { LeaderLease } from '../../elections/leader-lease';
import type { PermitStore } from '../../permits/permit-store';
import type { PermitClaim } from '../../permits/permit-decisions';
import type { CapabilityRuntime } from '../capability.runtime';
import { GatekeeperExplorer } from '../gatekeeper.explorer';
import { GATEKEEPER_LEADER_RUNS, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE, LEADER_ONLY_METADATA } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { LEADER_SKIP, loggedLeaderRun, type LeaderRunLog } from '../../elections/leader-run-log';
import { LeaderWorks, type LeaderWork } from '../../elections/leader-work';
import { leaderJobName } from '../../core/leader-job-name';
import { messages } from '../gatekeeper.messages';
import { PresenceRuntime } from '../presence/presence.runtime';
import { PermitsRuntime } from '../permits/permits.runtime';
import { LeaseLostError } from '../../core/errors/lease-lost.error';
import { unknownElection } from '../../elections/errors/election.errors';

export type { LeaderWork } from '../../elections/leader-work';

/** One election this node stands in. */
interface Standing {
  readonly candidate: LeaderCandidate;
  /** The claim on the election's semaphore in this process (so no other use of it here can release it). */
  readonly claim: PermitClaim;
}

/**
 * The elections this node stands in: one {@link LeaderCandidate} each, on the module's permit engine; the work
 * that runs while it leads ({@link LeaderWorks}: `whileLeader`, `@LeaderOnly` runs, their drain at shutdown); and the
 * stream of leader and participant changes. `ClusterService` serves it to applications.
 * Used inside the module, not by applications.
 */
@Injectable()
export class ElectionsRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly standings = new Map<string, Standing>();
  private readonly joining = new Map<string, Promise<void>>();
  private readonly works: LeaderWorks;
  private readonly viewLeaders = new Map<string, Leader | undefined>();
  private readonly subject = new Subject<ClusterChange>();
  private unsubscribe: Array<() => void> = [];
  private phase: 'idle' | 'started' | 'stopped' = 'idle';
  private stopping?: Promise<void>;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly runtime: PermitsRuntime,
    private readonly membership: PresenceRuntime,
    private readonly explorer: GatekeeperExplorer,
    private readonly events: GatekeeperEvents,
    @Inject(GATEKEEPER_LEADER_RUNS) private readonly runs: LeaderRunLog,
  ) {
    this.works = new LeaderWorks({
      drainMs: options.shutdownTimeoutMs,
      onFailed: (election, error) => this.logger.error(`Leader work of "${election}" failed: ${error.message}`, error.stack),
      onOverran: (election, lease) => this.logger.warn(
        `Leader work of "${election}" (epoch ${lease.epoch}) still running after ${options.shutdownTimeoutMs} ms: leadership is not ` +
          'released but left to expire, so no other node leads while it may still act (its signal has fired; work should stop on it)',
      ),
    });
    // Leadership whose work outlived the drain is left to lapse: releasing it would elect another leader now.
    runtime.keepAtStop(() => this.works.kept);
  }

  /** Leader and participant changes, as this node sees them. */
  changes(): Observable<ClusterChange> {
    return this.subject.asObservable();
  }

  /**
   * Joins every declared election (module options, `@LeaderOnly` methods, `whileLeader` calls made so far) and
   * starts following changes. Called by the module once it is ready.
   */
  async start(): Promise<void> {
    if (this.phase !== 'idle') return;
    this.phase = 'started';
    this.unsubscribe.push(
      this.store.watch((name, entry) => {
        const election = electionOf(name);
        if (election !== undefined && this.standings.has(election)) this.noteLeader(election, leaderIn(election, entry, this.options.permitClock.now()));
      }, (name) => electionOf(name) !== undefined),
      this.membership.onChange(({ joined, left }) => {
        for (const participant of joined) this.subject.next({ type: 'participant-joined', participant });
        for (const participant of left) this.subject.next({ type: 'participant-left', participant });
      }),
    );
    const named = new Map<string, string | undefined>([...this.options.elections.keys()].map((name) => [name, undefined]));
    for (const { where, metadata: election } of this.explorer.discover<string>(LEADER_ONLY_METADATA)) if (!named.has(election)) named.set(election, where);
    for (const election of this.works.elections()) if (!named.has(election)) named.set(election, undefined);
    for (const [election, where] of named) await this.join(election, where);
  }

  /** Whether this node stands in `election` (or is about to: declared, or named by a decorator or whileLeader). */
  isDeclared(election: string): boolean {
    return this.standings.has(election) || this.joining.has(election) || this.options.elections.has(election) || this.works.has(election);
  }

  /** This node's leadership of `election` while it holds it. Throws {@link NotFoundError} for one it does not stand in. */
  lease(election: string): LeaderLease | undefined {
    this.assertDeclared(election);
    return this.standings.get(election)?.candidate.lease;
  }

  /** The leader of `election` as this node knows it: itself while it leads, else its view (no round trip). */
  leader(election: string): Leader | undefined {
    this.assertDeclared(election);
    const own = this.standings.get(election)?.candidate.lease;
    const mine = own ? this.store.peek(electionSemaphore(election))?.entry?.permits.find((p) => p.fencingToken === own.epoch) : undefined;
    if (own && mine) return leaderOf(election, mine);
    const seen = leaderIn(election, this.store.peek(electionSemaphore(election))?.entry, this.options.permitClock.now());
    return seen?.instance === this.options.holder.instance && !own ? undefined : seen;
  }

  /** The elections this node stands in. */
  elections(): string[] {
    return [...this.standings.keys()];
  }

  /**
   * Runs `work(lease)` each time this node becomes leader of `election`; the lease's signal fires when it stops
   * being leader, and shutdown waits for the work (bounded) before handing over. Returns the unsubscribe.
   */
  whileLeader(election: string, work: LeaderWork): () => void {
    const remove = this.works.add(election, work);
    if (this.phase === 'started' && !this.standings.has(election)) {
      void this.join(election).catch((error: unknown) => this.logger.error(`Cannot join election "${election}": ${(error as Error).message}`));
    }
    const lease = this.standings.get(election)?.candidate.lease;
    if (lease) this.works.launch(election, work, lease);
    return remove;
  }

  /**
   * Runs `invoke` with the lease in async context if this node leads `election`; `undefined` (and a verbose line) if
   * not. The run history gets the run (`leader:<election>:<where>`, under the leadership's epoch) or counts the
   * skipped call, in memory only: the recorder writes in the background.
   */
  async runIfLeader(election: string, where: string, invoke: () => unknown): Promise<unknown> {
    const job = leaderJobName(election, where);
    if (this.phase !== 'started') {
      this.logger.verbose(`${where}: skipped, elections are not running (${this.phase === 'idle' ? 'starting' : 'shutting down'})`);
      this.runs.skippedTick(job, LEADER_SKIP.NOT_READY);
      return undefined;
    }
    const lease = this.lease(election);
    if (!lease) {
      this.logger.verbose(`${where}: skipped, not the leader of "${election}"`);
      this.runs.skippedTick(job, LEADER_SKIP.NOT_LEADER);
      return undefined;
    }
    try {
      return await loggedLeaderRun(this.runs, job, lease, () => this.works.run(election, lease, invoke));
    } catch (error) {
      if (!(error instanceof LeaseLostError && error.kind === 'leadership') || lease.isValid()) throw error;
      this.logger.warn(`${where}: stopped, ${error.message}`);
      return undefined;
    }
  }

  /** Makes this node step down from `election` and stand back one retry interval. Whether it was leading. */
  resign(election: string): Promise<boolean> {
    this.assertDeclared(election);
    const except = this.works.currentRun(); // leader work resigning must not wait for itself
    return this.standings.get(election)?.candidate.resign('resigned by request', (lease) => this.works.drain(election, lease, except)) ?? Promise.resolve(false);
  }

  /**
   * Stops standing everywhere. Where it leads: the signal fires, the leader work is waited for (up to
   * `shutdownTimeout`), then the permit is released, so another node is elected at once.
   */
  drain(): Promise<void> {
    return this.stop();
  }

  /** Leaves every election (see {@link drain}); idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<void> {
    this.phase = 'stopped';
    await Promise.allSettled([...this.joining.values()]);
    await Promise.all(
      [...this.standings].map(async ([election, { candidate, claim }]) => {
        await candidate.stop((lease) => this.works.drain(election, lease));
        this.runtime.decisions.unclaim(candidate.semaphore, claim);
      }),
    );
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.subject.complete();
  }

  private assertDeclared(election: string): void {
    if (!this.isDeclared(election)) throw unknownElection(election);
  }

  private join(election: string, where?: string): Promise<void> {
    if (this.standings.has(election)) return Promise.resolve();
    const joining = this.joining.get(election) ?? this.stand(election, where).finally(() => this.joining.delete(election));
    this.joining.set(election, joining);
    return joining;
  }

  private async stand(election: string, where?: string): Promise<void> {
    const semaphore = electionSemaphore(election);
    const dedicated = { kind: 'election', name: election, semaphore } as const;
    const definition = await ensureDefined(dedicated, {
      declared: this.options.elections.get(election),
      viewed: this.store.peek(semaphore)?.entry?.definition,
      admin: this.runtime.admin,
      autoDefine: this.options.autoDefine,
      defaults: () => electionDefinition({ name: election }),
      unknown: () => unknownElection(election, where),
      onDefined: (message) => this.logger.log(message),
    });
    if (this.phase !== 'started') return;
    if (definition.durationMs <= 2 * this.options.clockSkewMs) this.logger.warn(messages.durationBelowSkew(semaphore, definition.durationMs, this.options.clockSkewMs));
    const claim = claimDedicated(this.runtime.decisions, dedicated);
    const candidate = new LeaderCandidate(semaphore, election, this.permits(), {
      clock: this.options.permitClock,
      clockSkewMs: this.options.clockSkewMs,
      onElected: (lease) => this.elected(election, lease),
      onLost: (lease, reason) => this.lost(election, lease, reason),
      onError: (error) => this.logger.debug(`election "${election}": ${(error as Error).message}`),
      onUnusableLease: (message) => this.logger.warn(`Election "${election}": ${message}`),
    });
    this.standings.set(election, { candidate, claim });
    this.viewLeaders.set(election, leaderIn(election, this.store.peek(semaphore)?.entry, this.options.permitClock.now()));
    candidate.start();
  }

  private permits(): CandidatePermits {
    const { runtime } = this;
    return {
      ...candidatePermitsOf({
        tryAcquire: (semaphore, options) => runtime.decide(semaphore, options),
        refresh: (permit, options) => runtime.refresh(permit, options),
        release: (permit) => runtime.releaseQuietly(permit),
        watch: (permit, onLost, options) => runtime.engine.watch(permit, onLost, options),
        newsAgainst: (permit) => runtime.engine.newsAgainst(permit),
      }, this.store),
      keep: (permit) => this.works.kept.add(permit.fencingToken),
    };
  }

  private elected(election: string, lease: LeaderLease): void {
    this.logger.log(`Elected leader of "${election}" (epoch ${lease.epoch})`);
    this.subject.next({ type: 'leader-elected', election, epoch: lease.epoch });
    this.events.emit({ name: 'gatekeeper.leader.elected', election, epoch: lease.epoch });
    const semaphore = electionSemaphore(election);
    const permit = this.store.peek(semaphore)?.entry?.permits.find((p) => p.fencingToken === lease.epoch);
    if (permit) this.noteLeader(election, leaderOf(election, permit));
    this.works.elected(election, lease);
  }

  private lost(election: string, lease: LeaderLease, reason: string): void {
    this.logger.log(`No longer leader of "${election}" (epoch ${lease.epoch}): ${reason}`);
    this.subject.next({ type: 'leader-lost', election, epoch: lease.epoch, reason });
    this.events.emit({ name: 'gatekeeper.leader.lost', election, epoch: lease.epoch, reason });
  }

  private noteLeader(election: string, leader: Leader | undefined): void {
    const previous = this.viewLeaders.get(election);
    if (leaderChange(previous, leader) !== 'changed') return;
    this.viewLeaders.set(election, leader);
    this.subject.next({ type: 'leader-changed', election, leader, previous });
  }
}
