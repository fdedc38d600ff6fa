import type { PermitLease } from './permit-lease';

/**
 * What this instance does with its permits locally: who uses each semaphore's permit right now (a permit has one
 * user at a time, in a process as across the cluster), the leases of running work, and the decisions in flight
 * (shutdown waits for them before it releases anything, so a grant landing late is never run after its release).
 */
export class LocalPermits {
  private readonly users = new Map<string, symbol>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly runs = new Set<Promise<unknown>>();
  /** Leases of work running now. */
  readonly leases = new Set<PermitLease>();

  /** Takes the semaphore's permit for one user; `undefined` when another user of this process has it. */
  claim(semaphore: string): symbol | undefined {
    if (this.users.has(semaphore)) return undefined;
    const key = Symbol(semaphore);
    this.users.set(semaphore, key);
    return key;
  }

  /** Gives the claim back (only the claimer can). */
  unclaim(semaphore: string, key: symbol): void {
    if (this.users.get(semaphore) === key) this.users.delete(semaphore);
  }

  /** Whether a user of this process has the semaphore's permit. */
  isClaimed(semaphore: string): boolean {
    return this.users.has(semaphore);
  }

  /** Tracks a decision until it settles. */
  decision<T>(pending: Promise<T>): Promise<T> {
    this.inflight.add(pending);
    return pending.finally(() => this.inflight.delete(pending));
  }

  /** Tracks running work until it settles. */
  run<T>(pending: Promise<T>): Promise<T> {
    this.runs.add(pending);
    return pending.finally(() => this.runs.delete(pending));
  }

  /** Settles once every decision in flight now has. */
  async decisionsSettled(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }

  /** Settles once all running work and decisions in flight now have. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.runs, ...this.inflight]);
  }
}
