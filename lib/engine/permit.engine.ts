import { randomUUID } from 'node:crypto';
import { CorruptStateError } from '../errors/corrupt-state.error';
import { StoreUnavailableError } from '../errors/store-unavailable.error';
import type { Clock } from '../gatekeeper/clock';
import type { NextPermitState, PermitDecision, ReleaseDecision } from '../gatekeeper/decision';
import { DenyReason } from '../gatekeeper/deny-reason';
import { decideAcquire, decideForceRelease, decideRefresh, decideRelease } from '../gatekeeper/gatekeeper.rules';
import { initialPermitState, type NodeIdentity, type Permit, type PermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';
import type { PermitStore } from '../store/permit-store';
import type { AcquireResult } from './acquire-result';
import { readSemaphoreStatus, type SemaphoreStatus } from './semaphore-status';


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

  /** Grants a permit, or refreshes the one this node holds (the seed-000 decision). */
  tryAcquire(semaphore: string): Promise<AcquireResult> {
    return this.decide(semaphore, (def, state, now) => decideAcquire(def, state, this.identity, now, this.skewMs));
  }

  /** Refreshes exactly this permit; denies with `PERMIT_LOST` if it is no longer held. */
  refresh(permit: Permit): Promise<AcquireResult> {
    return this.decide(permit.semaphore, (def, state, now) =>
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

  /** Every semaphore with a definition or a permit state, with its live permits. */
  status(): Promise<SemaphoreStatus[]> {
    return readSemaphoreStatus(this.store, this.clock.now());
  }

  private async releaseBy(
    semaphore: string,
    rule: (state: PermitState, now: number) => ReleaseDecision,
  ): Promise<ReleaseDecision['outcome']> {
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const read = await this.store.readPermitState(semaphore);
      if (!read.state) return 'not-held';
      const decision = rule(read.state, this.clock.now());
      if (decision.next && !(await this.store.compareAndSetPermitState(semaphore, read, this.stamp(read.state, decision.next)))) {
        continue;
      }
      return decision.outcome;
    }
    throw new StoreUnavailableError(`Semaphore "${semaphore}": release kept conflicting with other writers`);
  }

  private async decide(
    semaphore: string,
    rule: (def: SemaphoreDefinition | undefined, state: PermitState, now: number) => PermitDecision,
  ): Promise<AcquireResult> {
    const members = this.quorum === undefined ? undefined : this.store.memberCount();
    if (members !== undefined && this.quorum !== undefined && members < this.quorum) {
      this.held.delete(semaphore);
      return this.denied(semaphore, DenyReason.QUORUM_NOT_MET, `${members} cluster member(s) visible, quorum is ${this.quorum}`);
    }
    try {
      for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
        const read = await this.store.readPermitState(semaphore);
        const now = this.clock.now();
        const state = read.state ?? initialPermitState(now);
        const decision = rule(this.store.getDefinition(semaphore), state, now);
        if (decision.next && !(await this.store.compareAndSetPermitState(semaphore, read, this.stamp(state, decision.next)))) {
          continue; // another node wrote in between: decide again on what it wrote
        }
        if (decision.outcome === 'denied') {
          this.held.delete(semaphore);
          return { granted: false, semaphore, reason: decision.reason, message: decision.message };
        }
        this.held.set(semaphore, decision.permit);
        return { granted: true, outcome: decision.outcome, permit: decision.permit };
      }
      return this.denied(semaphore, DenyReason.CONTENTION, `lost compare-and-set ${this.maxAttempts} times in a row`);
    } catch (error) {
      if (error instanceof StoreUnavailableError) return this.denied(semaphore, DenyReason.STORE_UNAVAILABLE, error.message);
      if (error instanceof CorruptStateError) return this.denied(semaphore, DenyReason.CORRUPT_STATE, error.message);
      throw error;
    }
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
