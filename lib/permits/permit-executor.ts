import type { PermitDenied } from './acquire-result';
import { DenyReason } from './deny-reason';
import type { PermitDecisions } from './permit-decisions';
import type { Permit } from './permit';
import { PermitLease } from './permit-lease';
import { permitContext } from './permit-context';
import { leavesEnoughToStart, START_MARGIN_FRACTION } from '../core/lease.rules';

/** How a run under a permit is taken and given back (decorated ticks and `withPermit`). */
export interface RunOptions {
  /** Decide from this node's view alone where it can (the tick path); see `DecideOptions.local`. */
  local?: boolean;
  keepAlive?: boolean;
  maxRunTimeMs?: number;
  /** Release after the run, keeping the permit until this many ms after its grant (release mode, withPermit). */
  releaseAfter?: { lockAtLeastForMs: number };
  /** Who runs, as an `IN_USE` denial of other work names it (a job's name; default `withPermit`). */
  user?: string;
}

/**
 * What a run under a permit came to. After a fresh grant, `vacantSince` says since when nobody could run the job
 * (see `PermitGranted.vacantSince`): what a scheduler reads to catch up missed instants.
 */
export type RunOutcome<T> =
  | { ran: true; value: T; permit: Permit; outcome: 'granted' | 'refreshed' | 'held'; vacantSince?: number }
  | { ran: false; denied: PermitDenied };

/** How the permit a run starts under was had: newly granted (with since when nobody held it), refreshed, or held. */
export interface RunGrant {
  readonly outcome: 'granted' | 'refreshed' | 'held';
  /** After a fresh grant: since when no permit of the semaphore could vouch (see `PermitGranted.vacantSince`). */
  readonly vacantSince?: number;
}

/**
 * Runs work under a semaphore's permit, the way ShedLock's `LockingTaskExecutor` runs a task under its lock:
 * claim the semaphore in this process (one run at a time per semaphore here), decide, start only on a permit
 * valid for a quarter of its duration or more, keep it alive while the work runs, release it after if asked, and
 * give the claim back. Every decorated tick and every `withPermit` goes through {@link run}, on this process's
 * {@link PermitDecisions} (its engine, claims and phase), with its lease in async context ({@link permitContext}).
 */
export class PermitExecutor {
  constructor(private readonly decisions: PermitDecisions) {}

  /** One run of `work` under `semaphore`'s permit, or the denial that kept it from starting. */
  async run<T>(semaphore: string, work: (lease: PermitLease, grant: RunGrant) => T | Promise<T>, options: RunOptions = {}): Promise<RunOutcome<T>> {
    const parts = this.decisions;
    const { engine } = parts;
    if (!parts.accepting()) return { ran: false, denied: parts.notReady(semaphore) };
    const key = parts.claim(semaphore, options.user ?? 'withPermit');
    if (!key) return { ran: false, denied: parts.inUse(semaphore) };
    let lease: PermitLease | undefined;
    try {
      const result = await parts.decide(semaphore, { local: options.local });
      if (!result.granted) return { ran: false, denied: result };
      // Decided while accepting, but shutdown may have begun meanwhile: never start then (the release follows).
      if (!parts.accepting()) return { ran: false, denied: parts.notReady(semaphore) };
      const { permit } = result;
      const tooLate = startMargin(permit, parts.clock.now(), parts.clockSkewMs);
      if (tooLate) return { ran: false, denied: tooLate };
      const news = engine.newsAgainst(permit);
      if (news) return { ran: false, denied: news };
      lease = new PermitLease(permit, (p) => parts.refresh(p, { local: true }), (p, onLost) => engine.watch(p, onLost), parts.clock, {
        keepAlive: options.keepAlive,
        clockSkewMs: parts.clockSkewMs,
        maxRunTimeMs: options.maxRunTimeMs,
      });
      parts.leases.add(lease);
      const running = lease;
      const { outcome, vacantSince } = result;
      const grant: RunGrant = vacantSince === undefined ? { outcome } : { outcome, vacantSince };
      // The lease in async context while the work runs: what `currentPermit()` and `currentLease()` answer inside it.
      const value = await parts.trackRun((async () => permitContext.run(running, () => work(running, grant)))());
      return vacantSince === undefined ? { ran: true, value, permit, outcome } : { ran: true, value, permit, outcome, vacantSince };
    } finally {
      if (lease) {
        lease.end();
        parts.leases.delete(lease);
        if (options.releaseAfter) await parts.releaseQuietly(lease.permit, lease.permit.grantedAt + options.releaseAfter.lockAtLeastForMs);
      }
      parts.unclaim(semaphore, key);
    }
  }
}

/**
 * A run starts only with a quarter of the permit's duration left (after the clock-skew allowance): less means the
 * decision or this process stalled, and the work could outlive the permit before its first refresh.
 */
function startMargin(permit: Permit, now: number, clockSkewMs: number): PermitDenied | undefined {
  if (leavesEnoughToStart(permit, now, clockSkewMs)) return undefined;
  const left = permit.expiresAt - clockSkewMs - now;
  const margin = Math.floor((permit.expiresAt - permit.refreshedAt) * START_MARGIN_FRACTION);
  return {
    granted: false,
    semaphore: permit.semaphore,
    reason: DenyReason.PERMIT_LOST,
    message: `the permit is valid for only ${left} ms more, less than the ${margin} ms a run needs to start (the decision or this process stalled)`,
  };
}
