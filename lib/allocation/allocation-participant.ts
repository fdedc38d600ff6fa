import type { Holder, Permit } from '../permits/permit';
import { PermitLease } from '../permits/permit-lease';
import { allocationSemaphore } from './allocation';
import { AllocationLease } from './allocation-lease';
import type { AllocationHandlers, AllocationParticipantOptions } from './allocation-participant.options';
import type { AllocationPermits } from './allocation-permits';
import { AllocationCoordinator } from './allocation-coordinator';
import { AllocationWork } from './allocation-work';
import { AllocationHoldings } from './allocation-holdings';
import { nextLookInMs, reconcile } from './allocation-holdings.rules';

/** What the node learns when it looks at the allocation. */
interface Current {
  readonly lease: AllocationLease;
  readonly permitLease: PermitLease;
}

/**
 * One node's part in one allocation. It takes part by holding a permit of `allocation:<name>` (renewed in the
 * background; its signal fires at expiry minus the skew bound if renewals fail), and moves towards the plan: it
 * revokes what the plan takes away (`onRevoked` returns first) before giving it up, and claims what the plan gives
 * it once no other live permit lists it. While it is the oldest participant it also writes the plan. Everything
 * it writes is a compare-and-set on the allocation's one entry ({@link AllocationHoldings}), so no resource is ever
 * listed by two live permits. The coordinator's job and the calls of the app's handlers live beside it.
 */
export class AllocationParticipant {
  readonly semaphore: string;
  private current?: Current;
  private running = false;
  private timer?: NodeJS.Timeout;
  private looking?: Promise<void>;
  private again = false;
  private unwatch?: () => void;
  private standBackUntil = 0;
  /** Tokens of parts this node lost: never resumed (a refresh of such a permit would revive its old holdings). */
  private readonly ended = new Set<number>();
  /** Tokens of parts left to lapse because their work did not stop in time: nothing may release them early. */
  private readonly kept = new Set<number>();
  /** A lost part being wound up: its work told (`onRevoked`), then its permit released. */
  private settling?: Promise<void>;
  private readonly work: AllocationWork;
  private readonly coordinator: AllocationCoordinator;
  private readonly holdings: AllocationHoldings;

  constructor(
    /** The allocation's name. */
    readonly allocation: string,
    private readonly holder: Holder,
    private readonly permits: AllocationPermits,
    private readonly handlers: AllocationHandlers,
    private readonly options: AllocationParticipantOptions,
  ) {
    this.semaphore = allocationSemaphore(allocation);
    this.coordinator = new AllocationCoordinator(allocation, this.semaphore, holder, permits, handlers, options);
    this.work = new AllocationWork(handlers, (error, what) => this.options.onError?.(error, what));
    this.holdings = new AllocationHoldings(permits, holder);
  }

  /** Fencing tokens of parts left to lapse (their `onRevoked` overran): whoever releases at shutdown must skip them. */
  keptTokens(): number[] {
    return [...this.kept];
  }

  /** This node's part while it takes part (its resources, their epochs, the signal). */
  get lease(): AllocationLease | undefined {
    return this.current?.lease;
  }

  /** The resources this node owns now. */
  owned(): string[] {
    return this.current?.lease.resources() ?? [];
  }

  /** Starts taking part: joins at once, then follows the entry's events and looks at least every third of the lease. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.permits.watchEntry(this.semaphore, () => this.kick());
    this.kick();
  }

  /** The resource set changed: the coordinator re-reads it now; any other node asks the coordinator to. */
  async resourcesChanged(): Promise<void> {
    this.coordinator.resourcesChanged();
    if (!this.isCoordinator()) await this.requestRebalance();
    this.kick();
  }

  /** Asks the coordinator for a rebalance (it re-reads the resource set first). Returns false if this node does not take part. */
  async requestRebalance(): Promise<boolean> {
    const current = this.current;
    return current ? this.holdings.requestRebalance(current.permitLease.permit) : false;
  }

  /**
   * Stops taking part: the signal fires, `onRevoked` runs for everything this node owns, and then its permit is
   * released but kept until `delayMs` (capped at its expiry) with its resources reserved for its acquirer name, so
   * a restart within that moves nothing. If `onRevoked` does not return in time, the permit is left to lapse.
   */
  async stop(reason = 'this node is shutting down'): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.unwatch?.();
    await this.looking;
    await this.settling;
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    // The lease keeps renewing while onRevoked runs, so nothing moves before it returned (or overran its timeout,
    // when the lease is ended and left to lapse); then the signal fires and the permit is released.
    const revoked = await this.revokeAll(current, reason);
    const permit = current.permitLease.permit;
    this.ended.add(permit.fencingToken);
    if (!revoked) return;
    current.permitLease.end(reason);
    await this.permits.release(current.permitLease.permit, this.options.clock.now() + this.options.delayMs);
  }

  private isCoordinator(): boolean {
    return this.coordinator.isCoordinator(this.current?.permitLease.permit.fencingToken);
  }

  /** Looks again soon: now, or right after the look in progress. */
  private kick(): void {
    if (!this.running) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => void this.look(), Math.max(0, delayMs));
    this.timer.unref();
  }

  private look(): Promise<void> {
    this.looking ??= this.step()
      .catch((error) => this.options.onError?.(error, 'allocation step'))
      .finally(() => {
        this.looking = undefined;
        if (!this.running) return;
        if (this.again) {
          this.again = false;
          return this.schedule(0);
        }
        const standingBack = this.current ? 0 : this.standBackUntil - performance.now();
        const { clock, clockSkewMs } = this.options;
        this.schedule(nextLookInMs(this.permits.peek(this.semaphore), clock.now(), clockSkewMs, this.coordinator.wakeAt, standingBack));
      });
    return this.looking;
  }

  private async step(): Promise<void> {
    if (!this.running) return;
    const current = this.current;
    if (!current) return this.join();
    if (!current.permitLease.isValid()) return;
    const token = current.permitLease.permit.fencingToken;
    if (this.isCoordinator()) await this.coordinator.coordinate(current.permitLease);
    if (this.current !== current || !current.permitLease.isValid()) return;
    const now = this.options.clock.now();
    const entry = this.permits.peek(this.semaphore);
    const { revoke, claim, held } = reconcile(entry, this.holder, token, now, this.options.clockSkewMs);
    // Held by the permit but never handed to the work (a claim whose answer was lost): hand it over now.
    const mine = entry?.permits.find((p) => p.fencingToken === token)?.resources ?? {};
    const adopt = held.filter((id) => !revoke.includes(id) && !current.lease.held().includes(id));
    if (adopt.length) await this.assign(current, new Map(adopt.map((id) => [id, mine[id]])));
    if (revoke.length) await this.revoke(current, revoke);
    if (claim.length && this.current === current && current.permitLease.isValid()) await this.claim(current, claim);
  }

  private async join(): Promise<void> {
    if (this.settling || performance.now() < this.standBackUntil) return;
    const now = this.options.clock.now();
    // A permit of a part this node lost that is still in the view (its release did not land): let it go again,
    // and never ask meanwhile, since asking would refresh it and revive what it held.
    const stale = this.permits
      .peek(this.semaphore)
      ?.permits.find((p) => p.instance === this.holder.instance && this.ended.has(p.fencingToken) && !p.released && p.expiresAt + this.options.clockSkewMs > now);
    // One left to lapse (its work may still act): wait. Any other: release it again.
    if (stale) return this.kept.has(stale.fencingToken) ? this.standBackUntilLapsed(stale) : this.permits.release(stale);
    const result = await this.permits.acquire(this.semaphore);
    if (!result.granted) return;
    if (this.kept.has(result.permit.fencingToken)) return this.standBackUntilLapsed(result.permit); // refreshed it: wait longer
    if (!this.running || this.ended.has(result.permit.fencingToken)) return this.permits.release(result.permit);
    const permitLease = new PermitLease(
      result.permit,
      (p) => this.holdings.refresh(p),
      (p, onLost) => this.permits.watch(p, onLost),
      this.options.clock,
      { keepAlive: true, clockSkewMs: this.options.clockSkewMs },
    );
    const current: Current = { permitLease, lease: new AllocationLease(this.allocation, permitLease) };
    this.current = current;
    permitLease.signal.addEventListener('abort', () => void this.lost(current), { once: true });
    this.options.onJoined?.(current.lease);
    // Resources its permit already lists (a refresh of a permit it held): adopted by the next look.
    this.again = true;
  }

  /** Stands back (no join) until `permit` has lapsed for every node. */
  private standBackUntilLapsed(permit: Permit): void {
    const lapsesInMs = permit.expiresAt + this.options.clockSkewMs - this.options.clock.now();
    this.standBackUntil = Math.max(this.standBackUntil, performance.now() + lapsesInMs + 1);
  }

  /** Hands resources to the work, waited for up to the revoke timeout (see {@link AllocationWork.assign}). */
  private assign(current: Current, resources: ReadonlyMap<string, number>): Promise<void> {
    return this.work.assign(current.lease, resources, this.timeoutFor(current));
  }

  private timeoutFor(current: Current): number {
    const { permit } = current.permitLease;
    return this.options.revokeTimeoutMs ?? Math.max(1, permit.expiresAt - permit.refreshedAt);
  }

  /**
   * Gives resources up: the work is told first (`onRevoked`, for those it was told it owns; one told before whose
   * release did not land is not told twice), then they go off the permit. A release that fails is retried at the
   * next look, since the permit still lists them.
   */
  private async revoke(current: Current, resources: readonly string[]): Promise<void> {
    const owned = resources.filter((id) => current.lease.held().includes(id));
    current.lease.remove(owned);
    if (owned.length && !(await this.tell(current, owned, 'the plan moves them to another node'))) return;
    await this.holdings.release(current.permitLease.permit, resources);
  }

  private async claim(current: Current, resources: readonly string[]): Promise<void> {
    const result = await this.holdings.claim(current.permitLease.permit, resources);
    if (!result.granted || this.current !== current) return;
    const epochs = result.permit.resources ?? {};
    if (result.result.claimed.length) await this.assign(current, new Map(result.result.claimed.map((id) => [id, epochs[id]])));
  }

  /** Runs `onRevoked` within the revoke timeout; past it, lets the lease lapse (never released) and returns false. */
  private async tell(current: Current, resources: string[], reason: string): Promise<boolean> {
    const timeoutMs = this.timeoutFor(current);
    if (await this.work.revoke(resources, reason, timeoutMs)) return true;
    this.abandon(current, `onRevoked of ${resources.length} resource(s) did not return within ${timeoutMs} ms`);
    return false;
  }

  /** Stops renewing and leaves the permit to lapse (work may still act on what it lists): nobody releases it early. */
  private abandon(current: Current, reason: string): void {
    const permit = current.permitLease.permit;
    this.ended.add(permit.fencingToken);
    this.kept.add(permit.fencingToken);
    if (this.current === current) this.current = undefined;
    current.permitLease.end(reason);
    // The latest expiry known for it: the lease's, or a later one the view saw (a write that landed unanswered).
    const seen = this.permits.peek(this.semaphore)?.permits.find((p) => p.fencingToken === permit.fencingToken);
    this.standBackUntilLapsed(seen && seen.expiresAt > permit.expiresAt ? seen : permit);
    this.options.onError?.(new Error(reason), 'onRevoked');
  }

  /** Tells the work about everything it still counts as its own; false if that overran (the lease then lapses). */
  private async revokeAll(current: Current, reason: string): Promise<boolean> {
    const all = current.lease.held();
    current.lease.remove(all);
    return all.length === 0 || this.tell(current, all, reason);
  }

  /** The part ended without a graceful stop: tell the work, then let go (the release may not land: then it lapses). */
  private async lost(current: Current): Promise<void> {
    if (this.current !== current) return;
    this.current = undefined;
    const permit = current.permitLease.permit;
    this.ended.add(permit.fencingToken);
    const reason = String((current.permitLease.signal.reason as Error)?.message ?? current.permitLease.signal.reason);
    this.options.onLost?.(reason);
    // Until the work stopped and the permit is let go, nothing here may touch that permit (not even to release a
    // stale copy of it) or take part again.
    this.settling = (async () => {
      if (await this.revokeAll(current, reason)) {
        current.permitLease.end();
        await this.permits.release(permit);
      }
    })();
    try {
      await this.settling;
    } finally {
      this.settling = undefined;
    }
    this.standBackUntil = Math.max(this.standBackUntil, performance.now() + this.options.delayMs);
    this.kick();
  }
}
