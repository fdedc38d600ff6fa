import type { Clock } from '../core/clock';
import type { AcquireResult } from '../permits/acquire-result';
import { DenyReason } from '../permits/deny-reason';
import type { Permit } from '../permits/permit';
import { PermitLease } from '../permits/permit-lease';
import type { SemaphoreEntry } from '../permits/semaphore-entry';
import type { PermitEngine } from '../permits/permit.engine';
import type { PermitStore } from '../permits/permit-store';
import type { DecideOptions } from '../permits/permit-engine.options';
import { nextAttemptAt } from './election.rules';
import { LeaderLease } from './leader-lease';
import { leavesEnoughToStart, retryIntervalMs } from '../core/lease.rules';

/** What a candidate needs of the permit layer (a `PermitEngine` and its store, or the Nest runtime over them). */
export interface CandidatePermits {
  /** Grants or refreshes the semaphore's permit; may answer from the node's view (no round trip). */
  acquire(semaphore: string): Promise<AcquireResult>;
  /** Refreshes exactly this permit. */
  refresh(permit: Permit): Promise<AcquireResult>;
  /** Releases this permit (never throws: one that cannot be released simply expires). */
  release(permit: Permit): Promise<void>;
  /** Told that this permit is left to lapse (leader work may still act on it): nothing may release it early. */
  keep?(permit: Permit): void;
  /** Calls `onLost` as soon as the node learns the permit no longer holds; returns the unsubscribe. */
  watch(permit: Permit, onLost: (reason: string) => void): () => void;
  /** A denial if the node's view already shows the permit no longer holds. */
  newsAgainst(permit: Permit): AcquireResult | undefined;
  /** The node's view of the semaphore's entry. */
  peek(semaphore: string): SemaphoreEntry | undefined;
  /** Calls `listener` whenever the view of the semaphore's entry changes; returns the unsubscribe. */
  watchEntry(semaphore: string, listener: (entry: SemaphoreEntry | undefined) => void): () => void;
}

/** Timing and callbacks of a {@link LeaderCandidate}. */
export interface LeaderCandidateOptions {
  clock: Clock;
  /** The clock-skew bound: the lease stops vouching this much before expiry, and others wait this much after it. */
  clockSkewMs: number;
  /** Most time between two attempts while another node leads (the renewal interval). Default: a third of the lease. */
  retryMs?: number;
  /** Called when this node becomes leader. */
  onElected?(lease: LeaderLease): void;
  /** Called when this node's leadership ends (its signal has fired). */
  onLost?(lease: LeaderLease, reason: string): void;
  /** Called when an attempt throws (it is retried). */
  onError?(error: unknown): void;
  /** Called once when a grant leaves too little of the lease after the skew bound to lead on it (lease ≲ 4/3 × skew). */
  onUnusableLease?(message: string): void;
}

/** Lease when the view does not know the election's definition yet. */
const UNKNOWN_LEASE_MS = 10_000;

/**
 * One node's candidacy in one election. It stands by acquiring the election's one permit: when the view shows
 * the slot free (at once, woken by the entry's events), when the holder's permit lapses for every node (its
 * expiry plus the skew bound), and at least every retry interval (answered from the view, with no round trip,
 * while another node leads). Elected, it holds the permit with a {@link PermitLease} that renews it every third
 * of the lease and steps down (the signal fires) at expiry minus the skew bound if renewals fail, which is before
 * any other node can be granted. A lost leadership is never resumed on its old epoch: a new term takes a new one.
 */
export class LeaderCandidate {
  private current?: { lease: LeaderLease; permit: PermitLease };
  private timer?: NodeJS.Timeout;
  private attempting?: Promise<void>;
  private unwatch?: () => void;
  private running = false;
  /**
   * Until when it stands back after resigning or being revoked, so others take over: on the monotonic clock
   * (`performance.now()`), so a step of the wall clock cannot stretch it.
   */
  private standBackUntil = 0;
  /** The step-down in progress (resign or stop), which a stop waits for. */
  private stepping?: Promise<void>;
  /** Whether the lease being too short for the skew bound was reported (once). */
  private reportedShortLease = false;
  /** Set while stop() or resign() steps down: they release the permit themselves, after the work stopped. */
  private steppingDown = false;
  /** Epochs this node led and lost: never resumed. */
  private readonly ended = new Set<number>();

  constructor(
    /** The election's semaphore. */
    readonly semaphore: string,
    /** The election's name (for leases and messages). */
    readonly election: string,
    private readonly permits: CandidatePermits,
    private readonly options: LeaderCandidateOptions,
  ) {}

  /** The leadership while this node holds it. */
  get lease(): LeaderLease | undefined {
    return this.current?.lease.isValid() ? this.current.lease : undefined;
  }

  /** Starts standing: tries at once, then as the view says. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.permits.watchEntry(this.semaphore, () => {
      if (this.running && !this.current) this.schedule();
    });
    this.schedule(0);
  }

  /**
   * Steps down if leading and stands back for one retry interval, so another candidate takes over (or this one
   * again, if it is alone). Returns whether it was leading.
   */
  async resign(reason = 'resigned', drain: (lease: LeaderLease) => Promise<boolean | void> = async () => undefined): Promise<boolean> {
    if (!this.current) return false;
    this.standBackUntil = performance.now() + this.retryMs();
    await this.stepDown(reason, drain);
    if (this.running) this.schedule();
    return true;
  }

  /**
   * Stops standing. If leading: the signal fires, `drain` waits for the leader's work to stop (the caller bounds
   * it), and then the permit is released, so the next leader is elected at once (a clean handover). When `drain`
   * resolves to `false` (work still running) the permit is not released but left to expire, so no other node
   * leads while that work may still act.
   */
  async stop(drain: (lease: LeaderLease) => Promise<boolean | void> = async () => undefined, reason = 'this node is shutting down'): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.unwatch?.();
    this.unwatch = undefined;
    await this.attempting;
    // A resign stepping down now: wait for it (its drain, its release) rather than return ahead of it.
    if (this.stepping) return this.stepping;
    await this.stepDown(reason, drain);
  }

  private stepDown(reason: string, drain: (lease: LeaderLease) => Promise<boolean | void>): Promise<void> {
    if (!this.current) return this.stepping ?? Promise.resolve();
    this.stepping = this.stepDownNow(this.current, reason, drain).finally(() => (this.stepping = undefined));
    return this.stepping;
  }

  private async stepDownNow(
    current: { lease: LeaderLease; permit: PermitLease },
    reason: string,
    drain: (lease: LeaderLease) => Promise<boolean | void>,
  ): Promise<void> {
    // Tell the work first (the signal fires), keep the permit renewed while it stops, then let the permit go.
    this.steppingDown = true;
    let stopped: boolean | void = false;
    try {
      current.lease.end(reason);
      stopped = await drain(current.lease);
    } finally {
      this.steppingDown = false;
      current.permit.end();
      if (stopped !== false) {
        await this.permits.release(current.permit.permit);
      } else {
        // Work still running: leave the permit to lapse, and do not stand again before it has for every node.
        const { permit } = current.permit;
        this.permits.keep?.(permit);
        const lapsesInMs = permit.expiresAt + this.options.clockSkewMs - this.options.clock.now();
        this.standBackUntil = Math.max(this.standBackUntil, performance.now() + lapsesInMs);
      }
    }
  }

  private retryMs(): number {
    const leaseMs = this.permits.peek(this.semaphore)?.definition?.durationMs ?? UNKNOWN_LEASE_MS;
    return this.options.retryMs ?? retryIntervalMs(leaseMs);
  }

  /** Arms the next attempt: after `delayMs`, or when the view says one can succeed (at most a retry interval away). */
  private schedule(delayMs?: number): void {
    if (!this.running || this.current) return;
    const now = this.options.clock.now();
    const due = delayMs ?? Math.max(nextAttemptAt(this.permits.peek(this.semaphore), now, this.options.clockSkewMs) - now, this.standBackUntil - performance.now());
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.attempt(), Math.max(0, Math.min(due, this.retryMs())));
    this.timer.unref();
  }

  private attempt(): Promise<void> {
    this.attempting ??= this.stand().finally(() => {
      this.attempting = undefined;
      this.schedule();
    });
    return this.attempting;
  }

  private async stand(): Promise<void> {
    if (!this.running || this.current || performance.now() < this.standBackUntil) return;
    // A permit of a term this node lost that is still in the view (its release did not land): let it go again, and
    // never ask for the slot meanwhile, since asking would refresh that permit and keep the old term alive.
    const now = this.options.clock.now();
    const stale = this.permits.peek(this.semaphore)?.permits.find((p) => this.ended.has(p.fencingToken) && p.expiresAt + this.options.clockSkewMs > now);
    if (stale) {
      await this.permits.release(stale);
      return;
    }
    let result: AcquireResult;
    try {
      result = await this.permits.acquire(this.semaphore);
    } catch (error) {
      this.options.onError?.(error);
      return;
    }
    if (!result.granted) return;
    const { permit } = result;
    if (!this.running || this.ended.has(permit.fencingToken) || performance.now() < this.standBackUntil) {
      // Stopped meanwhile, an epoch this node already lost (a refresh of its old permit), or standing back:
      // give it up, so the next term (here or elsewhere) starts on a new epoch.
      this.ended.add(permit.fencingToken);
      await this.permits.release(permit);
      return;
    }
    const news = this.permits.newsAgainst(permit);
    const left = permit.expiresAt - this.options.clockSkewMs - this.options.clock.now();
    if (news) return;
    if (!leavesEnoughToStart(permit, this.options.clock.now(), this.options.clockSkewMs)) {
      // The skew bound leaves too little of this lease to lead on: let the slot go rather than sit on it.
      if (!this.reportedShortLease) {
        this.reportedShortLease = true;
        this.options.onUnusableLease?.(
          `a grant leaves ${left} ms of its ${permit.expiresAt - permit.refreshedAt} ms lease after the clock-skew bound (${this.options.clockSkewMs} ms): ` +
            'too little to lead on; nobody can lead until the lease is lengthened well above twice the skew bound',
        );
      }
      await this.permits.release(permit);
      return;
    }
    this.elect(permit);
  }

  private elect(permit: Permit): void {
    const permitLease = new PermitLease(
      permit,
      (p) => this.permits.refresh(p),
      (p, onLost) => this.permits.watch(p, onLost),
      this.options.clock,
      { keepAlive: true, clockSkewMs: this.options.clockSkewMs },
    );
    const lease = new LeaderLease(this.election, permitLease);
    const current = { lease, permit: permitLease };
    this.current = current;
    clearTimeout(this.timer);
    if (lease.signal.aborted) return this.lost(current);
    lease.signal.addEventListener('abort', () => this.lost(current), { once: true });
    this.options.onElected?.(lease);
  }

  private lost(current: { lease: LeaderLease; permit: PermitLease }): void {
    if (this.current !== current) return;
    this.current = undefined;
    this.ended.add(current.lease.epoch);
    if (!this.steppingDown) {
      // Lost without a step-down (not renewed in time, revoked, paused, moved): let go of whatever is left of it.
      current.permit.end();
      void this.permits.release(current.permit.permit);
    }
    const reason = (current.lease.signal.reason as Error).message;
    // Taken away by an operator (revoked, paused, moved): stand back a retry interval so the others take over.
    if (reason.includes(DenyReason.PERMIT_REVOKED)) {
      this.standBackUntil = Math.max(this.standBackUntil, performance.now() + this.retryMs());
    }
    this.options.onLost?.(current.lease, reason);
    // A step-down in progress schedules when it is done (after its release), not while its drain still holds the permit.
    if (this.running && !this.steppingDown) this.schedule();
  }
}

/** The calls a candidate makes of the permit layer: a `PermitEngine`'s, or the Nest runtime's over it. */
export type CandidateCalls = Pick<PermitEngine, 'watch' | 'newsAgainst'> & {
  tryAcquire(semaphore: string, options: DecideOptions): Promise<AcquireResult>;
  refresh(permit: Permit, options: DecideOptions): Promise<AcquireResult>;
  release(permit: Permit): Promise<unknown>;
};

/** The {@link CandidatePermits} of a `PermitEngine` (or calls like its) on its store (decisions may answer from the view). */
export function candidatePermitsOf(engine: CandidateCalls, store: Pick<PermitStore, 'peek' | 'watch'>): CandidatePermits {
  return {
    acquire: (semaphore) => engine.tryAcquire(semaphore, { local: true }),
    refresh: (permit) => engine.refresh(permit, { local: true }),
    release: async (permit) => {
      await engine.release(permit).catch(() => undefined);
    },
    watch: (permit, onLost) => engine.watch(permit, onLost),
    newsAgainst: (permit) => engine.newsAgainst(permit),
    peek: (semaphore) => store.peek(semaphore)?.entry,
    watchEntry: (semaphore, listener) => store.watch((name, entry) => {
      if (name === semaphore) listener(entry);
    }, (name) => name === semaphore),
  };
}
