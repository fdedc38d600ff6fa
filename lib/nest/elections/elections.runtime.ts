import { GatekeeperEvents } from '../signals/gatekeeper-events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Subject, type Observable } from 'rxjs';
import type { ClusterChange } from '../../elections/cluster-change';
import { electionDefinition, electionOf, electionSemaphore, type Leader } from '../../elections/election';
import { leaderChange, leaderIn, leaderOf } from '../../elections/election.rules';
import { LeaderCandidate, type CandidatePermits } from '../../elections/leader-candidate';
import type { LeaderLease } from '../../elections/leader-lease';
import type { PermitStore } from '../../permits/permit-store';
import type { SemaphoreDefinition } from '../../permits/semaphore-definition';
import type { CapabilityRuntime } from '../capability.runtime';
import { GatekeeperExplorer } from '../gatekeeper.explorer';
import { GATEKEEPER_LEADER_RUNS, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE, LEADER_ONLY_METADATA } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { leaderContext } from './leader-context';
import { LEADER_SKIP, type LeaderRunLog } from './leader-run-log';
import { leaderJobName } from '../../core/leader-job-name';
import { messages } from '../gatekeeper.messages';
import { PresenceRuntime } from '../presence/presence.runtime';
import { PermitsRuntime } from '../permits/permits.runtime';
import { invalidOption } from '../../core/errors/input.errors';
import { unknownElection } from '../../elections/errors/election.errors';
import { LeaseLostError } from '../../core/errors/lease-lost.error';

/** Work to run while this node leads an election (see `ClusterService.whileLeader`). */
export type LeaderWork = (lease: LeaderLease) => unknown;

/** One election this node stands in. */
interface Standing {
  readonly candidate: LeaderCandidate;
  /** The claim on the election's semaphore in this process (so no other use of it here can release it). */
  readonly claim: symbol;
}

/**
 * The elections this node stands in: one {@link LeaderCandidate} each, on the module's permit engine; the work
 * that runs while it leads (`whileLeader`, `@LeaderOnly` runs) and its drain at shutdown; and the stream of
 * leader and participant changes. `ClusterService` serves it to applications. One file over 300 lines on
 * purpose: standing, leader work and its drain share the same per-election state and shutdown order.
 * Used inside the module, not by applications.
 */
@Injectable()
export class ElectionsRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly standings = new Map<string, Standing>();
  private readonly joining = new Map<string, Promise<void>>();
  private readonly work = new Map<string, Set<LeaderWork>>();
  private readonly running = new Map<string, Map<symbol, Promise<unknown>>>();
  private readonly viewLeaders = new Map<string, Leader | undefined>();
  private readonly subject = new Subject<ClusterChange>();
  private unsubscribe: Array<() => void> = [];
  private phase: 'idle' | 'started' | 'stopped' = 'idle';
  private stopping?: Promise<void>;
  /** Epochs whose work outlived the drain: their permits are left to lapse, never released (the permits runtime keeps them at its stop). */
  private readonly kept = new Set<number>();
  /** Which leader-work run the current async context belongs to (a resign from inside leader work must not wait on itself). */
  private readonly runId = new AsyncLocalStorage<symbol>();

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) private readonly store: PermitStore,
    private readonly runtime: PermitsRuntime,
    private readonly membership: PresenceRuntime,
    private readonly explorer: GatekeeperExplorer,
    private readonly events: GatekeeperEvents,
    @Inject(GATEKEEPER_LEADER_RUNS) private readonly runs: LeaderRunLog,
  ) {
    // Leadership whose work outlived the drain is left to lapse: releasing it would elect another leader now.
    runtime.keepAtStop(() => this.kept);
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
    for (const election of this.work.keys()) if (!named.has(election)) named.set(election, undefined);
    for (const [election, where] of named) await this.join(election, where);
  }

  /** Whether this node stands in `election` (or is about to: declared, or named by a decorator or whileLeader). */
  isDeclared(election: string): boolean {
    return this.standings.has(election) || this.joining.has(election) || this.options.elections.has(election) || this.work.has(election);
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
    const set = this.work.get(election) ?? new Set<LeaderWork>();
    this.work.set(election, set);
    set.add(work);
    if (this.phase === 'started' && !this.standings.has(election)) {
      void this.join(election).catch((error: unknown) => this.logger.error(`Cannot join election "${election}": ${(error as Error).message}`));
    }
    const lease = this.standings.get(election)?.candidate.lease;
    if (lease) this.launch(election, work, lease);
    return () => set.delete(work);
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
    const run = this.runs.started({ job, trigger: 'call', token: lease.epoch });
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    try {
      const value = await this.track(election, (id) => this.runId.run(id, () => leaderContext.run(lease, async () => invoke())));
      this.runs.finished(run, 'completed', took());
      return value;
    } catch (error) {
      // Whatever it threw once the leadership ended, it stopped because of that (as a job's run at its lost permit).
      this.runs.finished(run, lease.signal.aborted ? 'aborted' : 'failed', took(), error instanceof Error ? error : String(error));
      if (!(error instanceof LeaseLostError && error.kind === 'leadership') || lease.isValid()) throw error;
      this.logger.warn(`${where}: stopped, ${error.message}`);
      return undefined;
    }
  }

  /** Makes this node step down from `election` and stand back one retry interval. Whether it was leading. */
  resign(election: string): Promise<boolean> {
    this.assertDeclared(election);
    const except = this.runId.getStore(); // leader work resigning must not wait for itself
    return this.standings.get(election)?.candidate.resign('resigned by request', (lease) => this.drainWork(election, lease, except)) ?? Promise.resolve(false);
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
        await candidate.stop((lease) => this.drainWork(election, lease));
        this.runtime.local.unclaim(candidate.semaphore, claim);
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
    const definition = await this.ensureDefined(election, semaphore, where);
    if (this.phase !== 'started') return;
    if (definition.durationMs <= 2 * this.options.clockSkewMs) this.logger.warn(messages.durationBelowSkew(semaphore, definition.durationMs, this.options.clockSkewMs));
    const claim = this.runtime.local.claim(semaphore);
    if (!claim) throw invalidOption(`election "${election}"`, `its semaphore "${semaphore}" is in use by other work in this process`, semaphore);
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

  /** Makes sure the election's definition exists: the module options', the cluster's, or a default one (autoDefine). */
  private async ensureDefined(election: string, semaphore: string, where?: string): Promise<SemaphoreDefinition> {
    const declared = this.options.elections.get(election);
    if (declared) return declared; // published at start-up with the other definitions
    const existing = this.store.peek(semaphore)?.entry?.definition ?? (await this.runtime.admin.get(semaphore).catch(() => undefined));
    if (existing) return existing;
    if (!this.options.autoDefine) throw unknownElection(election, where);
    const definition = electionDefinition({ name: election });
    if (await this.runtime.admin.define(definition)) this.logger.log(`Defined election "${election}" (${semaphore}, lease ${definition.durationMs} ms, any group)`);
    return definition;
  }

  private permits(): CandidatePermits {
    const { runtime, store } = this;
    return {
      acquire: (semaphore) => runtime.decide(semaphore, { local: true }),
      refresh: (permit) => runtime.refresh(permit, { local: true }),
      release: async (permit) => {
        await runtime.releaseQuietly(permit);
      },
      keep: (permit) => this.kept.add(permit.fencingToken),
      watch: (permit, onLost) => runtime.engine.watch(permit, onLost),
      newsAgainst: (permit) => runtime.engine.newsAgainst(permit),
      peek: (semaphore) => store.peek(semaphore)?.entry,
      watchEntry: (semaphore, listener) => store.watch((name, entry) => {
        if (name === semaphore) listener(entry);
      }, (name) => name === semaphore),
    };
  }

  private elected(election: string, lease: LeaderLease): void {
    this.logger.log(`Elected leader of "${election}" (epoch ${lease.epoch})`);
    this.subject.next({ type: 'leader-elected', election, epoch: lease.epoch });
    this.events.emit({ name: 'gatekeeper.leader.elected', election, epoch: lease.epoch });
    const semaphore = electionSemaphore(election);
    const permit = this.store.peek(semaphore)?.entry?.permits.find((p) => p.fencingToken === lease.epoch);
    if (permit) this.noteLeader(election, leaderOf(election, permit));
    // A copy: work registered by work started here is launched once, by whileLeader; none once the lease ended.
    for (const work of [...(this.work.get(election) ?? [])]) {
      if (!lease.isValid()) break;
      this.launch(election, work, lease);
    }
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

  private launch(election: string, work: LeaderWork, lease: LeaderLease): void {
    void this.track(election, (id) => this.runId.run(id, () => leaderContext.run(lease, async () => work(lease)))).catch((error: unknown) => {
      if ((error instanceof LeaseLostError && error.kind === 'leadership') && !lease.isValid()) return;
      this.logger.error(`Leader work of "${election}" failed: ${(error as Error).message}`, (error as Error).stack);
    });
  }

  /** Runs and tracks one piece of leader work (shutdown and resign wait for it); `start` gets the run's id. */
  private track<T>(election: string, start: (id: symbol) => Promise<T>): Promise<T> {
    const runs = this.running.get(election) ?? new Map<symbol, Promise<unknown>>();
    this.running.set(election, runs);
    const id = Symbol(election);
    const pending = start(id);
    runs.set(id, pending);
    return pending.finally(() => runs.delete(id));
  }

  /** Waits for the election's leader work to stop, up to `shutdownTimeout`; whether it did. */
  private async drainWork(election: string, lease: LeaderLease, except?: symbol): Promise<boolean> {
    const pending = [...(this.running.get(election) ?? [])].filter(([id]) => id !== except).map(([, run]) => run);
    if (pending.length === 0) return true;
    const done = await Promise.race([
      Promise.allSettled(pending).then(() => true),
      sleep(this.options.shutdownTimeoutMs, false, { ref: false }),
    ]);
    if (!done) {
      this.logger.warn(
        `Leader work of "${election}" (epoch ${lease.epoch}) still running after ${this.options.shutdownTimeoutMs} ms: leadership is not ` +
          'released but left to expire, so no other node leads while it may still act (its signal has fired; work should stop on it)',
      );
    }
    return done;
  }
}
