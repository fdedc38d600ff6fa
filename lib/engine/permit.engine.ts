import { randomUUID } from 'node:crypto';
import { CorruptStateError } from '../errors/corrupt-state.error';
import { StoreUnavailableError } from '../errors/store-unavailable.error';
import type { Clock } from '../gatekeeper/clock';
import type { NextPermitState, PermitDecision, ReleaseDecision } from '../gatekeeper/decision';
import { DenyReason } from '../gatekeeper/deny-reason';
import { decideAcquire, decideForceRelease, decideRefresh, decideRelease } from '../gatekeeper/gatekeeper.rules';
import { initialPermitState, type NodeIdentity, type Permit, type PermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';
import type { PermitStore, VersionedPermitState } from '../store/permit-store';
import type { AcquireResult } from './acquire-result';


/** Options of a single decision. */
export interface DecideOptions {
  /** Allow an answer from this node's event-fed view of the permit state, without a round trip. Default false. */
  local?: boolean;
}

/** Tuning of a {@link PermitEngine}. */
export interface PermitEngineOptions {
  /** Compare-and-set attempts before a decision gives up with `CONTENTION`. Default 16. */
  maxAttempts?: number;
  /** Bound on how far nodes' clocks may disagree, in ms: permits count as live that much longer. Default 0. */
  clockSkewMs?: number;
  /** Least number of cluster members that must be visible to grant or refresh. Default: no check. */
  quorum?: number;
}

/**
 * Applies the gatekeeper rules to the store for one node: read the semaphore's permit state, decide, and
 * compare-and-set the result, re-reading and deciding again when another node wrote in between. Fails closed:
 * store errors become denials. Framework-free, so it can be used without Nest.
 */
export class PermitEngine {
  private readonly held = new Map<string, Permit>();

  private readonly maxAttempts: number;
  private readonly skewMs: number;
  private readonly quorum: number | undefined;

  constructor(
    private readonly store: PermitStore,
    /** Who this node is. */
    readonly identity: NodeIdentity,
    private readonly clock: Clock,
    options: PermitEngineOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 16;
    this.skewMs = options.clockSkewMs ?? 0;
    this.quorum = options.quorum;
  }

  /**
   * Grants a permit, or refreshes the one this node holds (the seed-000 decision). With `local`, it may answer
   * from what this node already knows, without a round trip (see {@link decideLocally}); without it, every
   * answer is checked against the store.
   */
  tryAcquire(semaphore: string, { local = false }: DecideOptions = {}): Promise<AcquireResult> {
    return this.decide(semaphore, local, (def, state, now) => decideAcquire(def, state, this.identity, now, this.skewMs));
  }

  /** Refreshes exactly this permit; denies with `PERMIT_LOST` if it is no longer held. `local` as for {@link tryAcquire}. */
  refresh(permit: Permit, { local = false }: DecideOptions = {}): Promise<AcquireResult> {
    return this.decide(permit.semaphore, local, (def, state, now) =>
      decideRefresh(def, state, this.identity, permit.fencingToken, now, this.skewMs),
    );
  }

  /**
   * Releases this node's permit by compare-and-set on its fencing token. With `notBefore` ahead, the permit is
   * shortened to end then. Throws {@link StoreUnavailableError} or {@link CorruptStateError} when it cannot tell.
   */
  async release(permit: Permit, notBefore = 0): Promise<ReleaseDecision['outcome']> {
    const outcome = await this.releaseBy(permit.semaphore, (state, now) =>
      decideRelease(state, this.identity, permit.fencingToken, now, notBefore, this.skewMs),
    );
    return this.forget(permit, outcome);
  }

  /** Operator action: removes the permit with `fencingToken` from `semaphore`, whoever holds it. */
  forceRelease(semaphore: string, fencingToken: number): Promise<ReleaseDecision['outcome']> {
    return this.releaseBy(semaphore, (state, now) => decideForceRelease(state, fencingToken, now, this.skewMs));
  }

  /** The permits this node believes it holds (as of its last successful grant or refresh). */
  heldPermits(): Permit[] {
    return [...this.held.values()];
  }

  /**
   * Decides from what this node already knows, without a round trip, when that cannot be wrong for lack of news:
   * a denial that writes nothing (denying is always safe; a stale view only delays a takeover until the permits
   * it shows expire), or this node's own permit while more than half its duration is left (others cannot take it
   * before it expires, and a live edit reaches the definition cache by event). Anything else goes to the store.
   */
  private decideLocally(
    semaphore: string,
    rule: (def: SemaphoreDefinition | undefined, state: PermitState, now: number) => PermitDecision,
  ): AcquireResult | undefined {
    const view = this.store.peekPermitState(semaphore);
    if (!view?.state) return undefined;
    const now = this.clock.now();
    const definition = this.store.getDefinition(semaphore);
    const decision = rule(definition, view.state, now);
    if (decision.outcome === 'denied') {
      return decision.next ? undefined : this.denied(semaphore, decision.reason, decision.message);
    }
    if (decision.outcome !== 'refreshed' || !definition) return undefined;
    const own = view.state.permits.find((p) => p.fencingToken === decision.permit.fencingToken);
    if (!own || own.expiresAt - this.skewMs - now <= definition.durationMs / 2) return undefined;
    this.held.set(semaphore, own);
    return { granted: true, outcome: 'held', permit: own };
  }

  private async releaseBy(
    semaphore: string,
    rule: (state: PermitState, now: number) => ReleaseDecision,
  ): Promise<ReleaseDecision['outcome']> {
    const decision = await this.apply(semaphore, false, (read, now): ReleaseDecision =>
      read.state ? rule(read.state, now) : { outcome: 'not-held' },
    );
    if (!decision) throw new StoreUnavailableError(`Semaphore "${semaphore}": release kept conflicting with other writers`);
    return decision.outcome;
  }

  private async decide(
    semaphore: string,
    local: boolean,
    rule: (def: SemaphoreDefinition | undefined, state: PermitState, now: number) => PermitDecision,
  ): Promise<AcquireResult> {
    const members = this.quorum === undefined ? undefined : this.store.memberCount();
    if (members !== undefined && this.quorum !== undefined && members < this.quorum) {
      this.held.delete(semaphore);
      return this.denied(semaphore, DenyReason.QUORUM_NOT_MET, `${members} cluster member(s) visible, quorum is ${this.quorum}`);
    }
    try {
      const answer = local ? this.decideLocally(semaphore, rule) : undefined;
      if (answer) return answer;
      const decision = await this.apply(semaphore, local, (read, now) =>
        rule(this.store.getDefinition(semaphore), read.state ?? initialPermitState(now), now),
      );
      if (!decision) return this.denied(semaphore, DenyReason.CONTENTION, `lost compare-and-set ${this.maxAttempts} times in a row`);
      if (decision.outcome === 'denied') {
        this.held.delete(semaphore);
        return { granted: false, semaphore, reason: decision.reason, message: decision.message };
      }
      this.held.set(semaphore, decision.permit);
      return { granted: true, outcome: decision.outcome, permit: decision.permit };
    } catch (error) {
      if (error instanceof StoreUnavailableError) return this.denied(semaphore, DenyReason.STORE_UNAVAILABLE, error.message);
      if (error instanceof CorruptStateError) return this.denied(semaphore, DenyReason.CORRUPT_STATE, error.message);
      throw error;
    }
  }

  /**
   * The read-decide-compare-and-set loop. The first attempt may compare-and-set against the state this node
   * already knows, saving the read: if that state was stale, the write fails and the loop reads. An answer that
   * writes nothing is only given from a state read from the store, unless `local` allows the view. Returns the
   * decision that was applied, or `undefined` when every attempt lost a race.
   */
  private async apply<D extends { next?: NextPermitState }>(
    semaphore: string,
    local: boolean,
    decide: (read: VersionedPermitState, now: number) => D,
  ): Promise<D | undefined> {
    let read: VersionedPermitState | undefined = this.store.peekPermitState(semaphore);
    let fromView = read !== undefined;
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      if (!read) {
        read = await this.store.readPermitState(semaphore);
        fromView = false;
      }
      const now = this.clock.now();
      const decision = decide(read, now);
      if (!decision.next) {
        if (!fromView || local) return decision;
        read = undefined;
        continue;
      }
      const state = read.state ?? initialPermitState(now);
      if (await this.store.compareAndSetPermitState(semaphore, read, this.stamp(state, decision.next))) return decision;
      // Another node wrote in between. With local answers allowed, its write may already have reached this
      // node's view by event (a lost race then costs no read); otherwise read what it wrote.
      const seen = local ? this.store.peekPermitState(semaphore) : undefined;
      read = seen && seen.raw !== read.raw ? seen : undefined;
      fromView = read !== undefined;
    }
    return undefined;
  }

  private denied(semaphore: string, reason: DenyReason, message: string): AcquireResult {
    return { granted: false, semaphore, reason, message };
  }

  private stamp(state: PermitState, next: NextPermitState): PermitState {
    return { revision: state.revision + 1, lastToken: next.lastToken, writeId: randomUUID(), permits: next.permits };
  }

  private forget<T extends ReleaseDecision['outcome']>(permit: Permit, outcome: T): T {
    if (this.held.get(permit.semaphore)?.fencingToken === permit.fencingToken) this.held.delete(permit.semaphore);
    return outcome;
  }
}
