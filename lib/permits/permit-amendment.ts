import type { Clock } from '../core/clock';
import type { Deadline } from '../core/deadline';
import type { PermitDenied } from './acquire-result';
import { compareAndSetLoop, type Attempt } from './compare-and-set.loop';
import { DenyReason } from './deny-reason';
import type { HeldPermits } from './held-permits';
import type { Holder, Permit } from './permit';
import type { PermitStore, VersionedEntry } from './permit-store';
import { decideRefresh, lapsedOnStoreBy } from './permit.rules';
import type { SemaphoreEntry } from './semaphore-entry';
import type { ObservedEntry } from './semaphore.view';
import { denied, type FailClosed } from './store-denial';
import { answersFromView } from '../core/lease.rules';

/** What {@link PermitEngine.amend} passes to its change: the entry as read, and this permit as the write refreshes it. */
export interface AmendInput {
  /** The entry as read (the write replaces it). */
  readonly entry: SemaphoreEntry;
  /** The live permits as the write will have them, this instance's one refreshed. */
  readonly permits: readonly Permit[];
  /** This instance's permit, refreshed. */
  readonly permit: Permit;
  /** The revision the write gets (the read one plus one): the epoch of a resource this write hands out. */
  readonly revision: number;
  /** The deciding node's clock. */
  readonly now: number;
}

/** What an amendment writes besides the refresh, and what it tells its caller. */
export interface Amendment<T> {
  /** The permits to write instead of {@link AmendInput.permits}; must keep this instance's permit (same token). */
  readonly permits?: readonly Permit[];
  /** The entry's new annex; `undefined` keeps it. */
  readonly annex?: Readonly<Record<string, unknown>>;
  /** Returned to the caller with the written entry. */
  readonly result: T;
}

/** The outcome of {@link PermitEngine.amend}: written, or denied (nothing written). */
export type AmendResult<T> =
  | { readonly granted: true; readonly permit: Permit; readonly entry: SemaphoreEntry; readonly result: T }
  | PermitDenied;

/** What one attempt of an amendment decides: a denial, or the refreshed permit and entry it writes. */
export type AmendOutcome<T> = { denied: PermitDenied } | { permit: Permit; entry: SemaphoreEntry; result: T };

/**
 * One compare-and-set attempt of {@link PermitEngine.amend} on the entry as read: the refresh of `permit` and, in the
 * same write, what `change` adds. A permit that no longer holds is denied and nothing is written.
 */
export function amendAttempt<T>(
  read: VersionedEntry,
  permit: Permit,
  holder: Holder,
  now: number,
  skewMs: number,
  change: (input: AmendInput) => Amendment<T>,
): Attempt<AmendOutcome<T>> {
  const { semaphore } = permit;
  const decision = decideRefresh(read.entry, holder, permit.fencingToken, now, skewMs);
  if (decision.outcome === 'denied' || !read.entry) {
    const denial = decision.outcome === 'denied' ? decision : { reason: DenyReason.UNKNOWN_SEMAPHORE, message: 'no entry' };
    return { result: { denied: denied(semaphore, denial.reason, denial.message) } };
  }
  const revision = read.entry.revision + 1;
  const amendment = change({ entry: read.entry, permits: decision.next.permits, permit: decision.permit, revision, now });
  const permits = amendment.permits ?? decision.next.permits;
  const own = permits.find((p) => p.fencingToken === permit.fencingToken && p.instance === holder.instance);
  if (!own) throw new Error(`amend of "${semaphore}" dropped this instance's permit ${permit.fencingToken}`);
  const write: Omit<SemaphoreEntry, 'writeId'> = {
    ...read.entry,
    revision,
    lastToken: decision.next.lastToken,
    permits,
    ...(amendment.annex !== undefined && { annex: amendment.annex }),
  };
  return { result: { permit: own, entry: { ...write, writeId: '' }, result: amendment.result }, write, notBefore: lapsedOnStoreBy(read.entry, write, now, skewMs) };
}

/**
 * `amend` without a round trip, from a view the engine judged young enough: only when it shows this permit held
 * with more than half of it left (as a local refresh would answer), the permit was not let go, and `change` on that
 * view changes nothing. `undefined` when the store must be asked.
 */
export function amendFromView<T>(
  view: ObservedEntry,
  permit: Permit,
  holder: Holder,
  now: number,
  skewMs: number,
  change: (input: AmendInput) => Amendment<T>,
  letGo: boolean,
): AmendResult<T> | undefined {
  const durationMs = view.entry?.definition?.durationMs;
  if (!view.entry || durationMs === undefined) return undefined;
  const decision = decideRefresh(view.entry, holder, permit.fencingToken, now, skewMs);
  if (decision.outcome === 'denied') return undefined;
  const own = view.entry.permits.find((p) => p.fencingToken === permit.fencingToken);
  if (!own || !answersFromView(own.expiresAt, skewMs, now, durationMs) || letGo) return undefined;
  const amendment = change({ entry: view.entry, permits: decision.next.permits, permit: decision.permit, revision: view.entry.revision + 1, now });
  if (amendment.permits !== undefined || amendment.annex !== undefined) return undefined;
  return { granted: true, permit: own, entry: view.entry, result: amendment.result };
}

/** What amendments stand on: the engine's store, identity and bookkeeping, and how its decisions are bounded. */
export interface AmendmentParts {
  readonly store: PermitStore;
  readonly holder: Holder;
  readonly clock: Clock;
  readonly skewMs: number;
  readonly maxAttempts: number;
  readonly held: HeldPermits;
  readonly failClosed: FailClosed;
  /** The deadline of an amendment of `semaphore` (the engine's, from the semaphore's duration). */
  deadline(semaphore: string): Deadline;
  /** Whether an answer may stand on what this node knows of an entry (the engine's rule). */
  young(known: ObservedEntry): boolean;
}

/**
 * `PermitEngine.amend`: refreshes this instance's permit and, in the same compare-and-set, applies a change
 * (allocations: claim or give back resources, write the plan in the annex). Never withdraws the permit: its holder
 * lets go itself once its work stopped.
 */
export class PermitAmendments {
  constructor(private readonly parts: AmendmentParts) {}

  /** See `PermitEngine.amend`. */
  async amend<T>(permit: Permit, change: (input: AmendInput) => Amendment<T>, local: boolean): Promise<AmendResult<T>> {
    const { store, holder, clock, skewMs, maxAttempts, held, failClosed } = this.parts;
    const { semaphore } = permit;
    const belowQuorum = failClosed.belowQuorum(semaphore);
    if (belowQuorum) return belowQuorum;
    const answer = local ? this.fromView(permit, change) : undefined;
    if (answer) return answer;
    try {
      const outcome = await compareAndSetLoop<AmendOutcome<T>>(
        store,
        semaphore,
        (read) => amendAttempt(read, permit, holder, clock.now(), skewMs, change),
        { maxAttempts, deadline: this.parts.deadline(semaphore), known: store.peek(semaphore) },
      );
      if (!outcome) return denied(semaphore, DenyReason.CONTENTION, `lost compare-and-set ${maxAttempts} times in a row`);
      if ('denied' in outcome) {
        held.delete(semaphore, permit.fencingToken);
        return outcome.denied;
      }
      // A refresh that lands after this instance let the permit go must not make it "held" again.
      if (!held.wasLetGo(semaphore, outcome.permit.fencingToken)) held.set(semaphore, outcome.permit);
      return { granted: true, ...outcome };
    } catch (error) {
      return failClosed.storeFailure(semaphore, error);
    }
  }

  /** An amendment from the view, without a round trip, when the view is young enough (see {@link amendFromView}). */
  private fromView<T>(permit: Permit, change: (input: AmendInput) => Amendment<T>): AmendResult<T> | undefined {
    const { store, holder, clock, skewMs, held } = this.parts;
    const view = store.peek(permit.semaphore);
    if (!view || !this.parts.young(view)) return undefined;
    return amendFromView(view, permit, holder, clock.now(), skewMs, change, held.wasLetGo(permit.semaphore, permit.fencingToken));
  }
}
