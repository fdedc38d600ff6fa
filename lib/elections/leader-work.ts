import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LeaderLease } from './leader-lease';
import { LeaseLostError } from '../core/errors/lease-lost.error';

/** Work to run while this node leads an election (see `ClusterService.whileLeader`). */
export type LeaderWork = (lease: LeaderLease) => unknown;

/** Carries the leadership lease of a running `@LeaderOnly` method (or `whileLeader` work) through its async calls. */
export const leaderContext = new AsyncLocalStorage<LeaderLease>();

/** The bound and the reports of {@link LeaderWorks}. */
export interface LeaderWorksOptions {
  /** How long a drain waits for the work to stop (the module's `shutdownTimeout`). */
  drainMs: number;
  /** Work started at an election failed (not because its leadership ended). */
  onFailed(election: string, error: Error): void;
  /** Work still running when its drain gave up: the leadership is left to lapse. */
  onOverran(election: string, lease: LeaderLease): void;
}

/**
 * The work that runs while this node leads, per election: what is registered to start at each election
 * (`whileLeader`), every run of it and of `@LeaderOnly` methods (tracked, with the lease in async context), and the
 * drain that waits for them (bounded) before the leadership is let go. Epochs whose work outlived the drain are kept:
 * their permits are left to lapse, never released, since releasing would elect another leader while the work acts.
 */
export class LeaderWorks {
  private readonly work = new Map<string, Set<LeaderWork>>();
  private readonly running = new Map<string, Map<symbol, Promise<unknown>>>();
  /** Which run the current async context belongs to (a resign from inside leader work must not wait on itself). */
  private readonly runId = new AsyncLocalStorage<symbol>();
  /** Epochs whose work outlived the drain. */
  readonly kept = new Set<number>();

  constructor(private readonly options: LeaderWorksOptions) {}

  /** Registers `work` to start each time this node is elected in `election`; returns the unregister. */
  add(election: string, work: LeaderWork): () => void {
    const set = this.work.get(election) ?? new Set<LeaderWork>();
    this.work.set(election, set);
    set.add(work);
    return () => set.delete(work);
  }

  /** The elections that have work registered. */
  elections(): string[] {
    return [...this.work.keys()];
  }

  /** Whether work was ever registered for `election`. */
  has(election: string): boolean {
    return this.work.has(election);
  }

  /** Starts the work registered for `election` under a new `lease` (none once the lease ended). */
  elected(election: string, lease: LeaderLease): void {
    // A copy: work registered by work started here is started once, by its registration.
    for (const work of [...(this.work.get(election) ?? [])]) {
      if (!lease.isValid()) break;
      this.launch(election, work, lease);
    }
  }

  /** Starts `work` under `lease` in the background; a failure that is not the leadership ending is reported. */
  launch(election: string, work: LeaderWork, lease: LeaderLease): void {
    void this.run(election, lease, () => work(lease)).catch((error: unknown) => {
      if ((error instanceof LeaseLostError && error.kind === 'leadership') && !lease.isValid()) return;
      this.options.onFailed(election, error as Error);
    });
  }

  /** Runs `invoke` as leader work of `election` (drains wait for it), with `lease` in async context. */
  run(election: string, lease: LeaderLease, invoke: () => unknown): Promise<unknown> {
    const runs = this.running.get(election) ?? new Map<symbol, Promise<unknown>>();
    this.running.set(election, runs);
    const id = Symbol(election);
    const pending = this.runId.run(id, () => leaderContext.run(lease, async () => invoke()));
    runs.set(id, pending);
    return pending.finally(() => runs.delete(id));
  }

  /** The run the current async context belongs to, if any. */
  currentRun(): symbol | undefined {
    return this.runId.getStore();
  }

  /** Waits for the election's work (but the run `except`) to stop, up to `drainMs`; whether it did. */
  async drain(election: string, lease: LeaderLease, except?: symbol): Promise<boolean> {
    const pending = [...(this.running.get(election) ?? [])].filter(([id]) => id !== except).map(([, run]) => run);
    if (pending.length === 0) return true;
    const done = await Promise.race([Promise.allSettled(pending).then(() => true), sleep(this.options.drainMs, false, { ref: false })]);
    if (!done) this.options.onOverran(election, lease);
    return done;
  }
}
