import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { Clock } from '../core/clock';
import type { PermitDecision, ReleaseDecision } from './decision';
import { DenyReason } from './deny-reason';
import { decideAcquire, decideRefresh, decideRelease, lapsedOnStoreBy, stampEntry } from './permit.rules';
import type { Holder, Permit } from './permit';
import type { SemaphoreEntry } from './semaphore-entry';
import type { PermitStore, VersionedEntry } from './permit-store';
import type { ObservedEntry } from './semaphore.view';
import type { AcquireResult, PermitDenied } from './acquire-result';
import { compareAndSetLoop, type Attempt } from './compare-and-set.loop';
import { Deadline } from '../core/deadline';
import { HeldPermits, PermitNews } from './held-permits';
import { EntryWaits } from './entry-waits';
import { givesWayToIncumbents } from './incumbent.rules';
import { PermitAmendments, type AmendInput, type Amendment, type AmendResult } from './permit-amendment';
import { denied, FailClosed } from './store-denial';
import type { DecideOptions, PermitEngineOptions } from './permit-engine.options';
import { answersFromView, decisionBudgetMs, HEAD_START_FRACTION } from '../core/lease.rules';


/** How long a node may deny an unknown semaphore from its view before asking again. */
const UNKNOWN_SEMAPHORE_AGE_MS = 5_000;

/**
 * Applies the gatekeeper rules to the store for one instance: read the semaphore's entry, decide, and
 * compare-and-set the result, deciding again when another node wrote in between. Fails closed: store errors
 * become denials. Every decision has a deadline of a quarter of the permit's duration (at most `storeTimeoutMs`),
 * so a stalled member becomes a denial, never a late grant. Framework-free, so it can be used without Nest.
 *
 * Local answers (`local: true`) come from the node's view only while it is younger than the permit duration
 * (events can be lost silently), and only when they cannot be wrong for lack of news: a denial that writes
 * nothing, or the holder's own permit while more than half of it is left (the holder writes at least that often,
 * so its knowledge is never older than half a duration). Nothing frees a permit's slot early without its holder
 * writing it, so a holder's permit stays its own until `expiresAt` whatever it missed.
 *
 * The decision path (quorum, local answer, compare-and-set, rebuild, denial) is here; what the view tells this
 * instance about its own permits, and who hears it, is {@link PermitNews}'; amendments (allocations' refresh with a
 * change) are {@link PermitAmendments}'; failing closed is {@link FailClosed}'; the bookkeeping of this instance's
 * permits is {@link HeldPermits}'.
 */
export class PermitEngine {
  private readonly held: HeldPermits;
  private readonly news: PermitNews;
  private readonly waits = new EntryWaits();
  private readonly headStartMs: number;
  private readonly maxAttempts: number;
  private readonly skewMs: number;
  private readonly failClosed: FailClosed;
  private readonly amendments: PermitAmendments;
  private readonly storeTimeoutMs: number;
  private readonly unwatchStore: () => void;

  constructor(
    private readonly store: PermitStore,
    /** Who this instance is. */
    readonly holder: Holder,
    private readonly clock: Clock,
    private readonly options: PermitEngineOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 16;
    this.skewMs = options.clockSkewMs ?? 0;
    this.storeTimeoutMs = options.storeTimeoutMs ?? 5_000;
    this.headStartMs = options.incumbentHeadStartMs ?? 50;
    this.held = new HeldPermits(holder.instance);
    this.failClosed = new FailClosed(store, options.quorum, this.held);
    const { maxAttempts, skewMs, held, failClosed } = this;
    this.amendments = new PermitAmendments({
      store, holder, clock, skewMs, maxAttempts, held, failClosed,
      deadline: (semaphore) => this.deadlineFor(semaphore, 'amend'),
      young: (known) => this.young(known),
    });
    this.news = new PermitNews(store, holder, clock, this.skewMs, this.held, (name, token) => {
      void this.decide(name, false, token, (e, at) => decideRefresh(e, this.holder, token, at, this.skewMs));
    });
    // Only news of semaphores this instance holds, lets go or watches can change what it does (see PermitNews): the
    // others' values may stay undecoded until a decision asks for them.
    this.unwatchStore = store.watch((name, entry) => {
      this.waits.notify(name);
      this.news.heard(name, entry);
    }, (name) => this.held.tracks(name) || this.news.watches(name) || this.waits.has(name));
  }

  /**
   * Grants a permit, or refreshes the one this instance holds (the seed-000 decision). With `local`, it may
   * answer from what this node already knows, without a round trip; without it, every answer is checked against
   * the store.
   */
  tryAcquire(semaphore: string, { local = false }: DecideOptions = {}): Promise<AcquireResult> {
    return this.decide(semaphore, local, undefined, (entry, now) => decideAcquire(entry, this.holder, now, this.skewMs));
  }

  /** Refreshes exactly this permit; denies with `PERMIT_LOST` if it is no longer held. `local` as for {@link tryAcquire}. */
  refresh(permit: Permit, { local = false }: DecideOptions = {}): Promise<AcquireResult> {
    return this.decide(permit.semaphore, local, permit.fencingToken, (entry, now) => decideRefresh(entry, this.holder, permit.fencingToken, now, this.skewMs));
  }

  /**
   * Releases this instance's permit by compare-and-set on its fencing token. With `notBefore` ahead, the permit
   * is kept until then, never refreshed again. Throws {@link StoreUnavailableError} or {@link CorruptStateError}
   * when it cannot tell.
   */
  async release(permit: Permit, notBefore = 0): Promise<ReleaseDecision['outcome']> {
    this.news.notify(permit.semaphore, permit.fencingToken, 'released');
    // From here on this instance never answers from its view that it holds this permit: the release may land
    // late (a stalled member), and a job started on the permit meanwhile would run while another node holds it.
    this.held.letGoOf(permit.semaphore, permit.fencingToken);
    const deadline = this.deadlineFor(permit.semaphore, 'release');
    const outcome = await compareAndSetLoop(
      this.store,
      permit.semaphore,
      (read) => {
        const now = this.clock.now();
        const decision = decideRelease(read.entry, this.holder, permit.fencingToken, now, notBefore, this.skewMs);
        if (!decision.next || !read.entry) return { result: decision.outcome };
        return { result: decision.outcome, write: stampEntry(read.entry, decision.next), notBefore: lapsedOnStoreBy(read.entry, decision.next, now, this.skewMs) };
      },
      { maxAttempts: this.maxAttempts, deadline, known: this.store.peek(permit.semaphore) },
    );
    if (!outcome) throw new StoreUnavailableError(`Semaphore "${permit.semaphore}": release kept conflicting with other writers`);
    return outcome;
  }

  /**
   * Calls `onLost(reason)` as soon as this node learns that `permit` no longer holds (revoked, excluded by an
   * edit, over capacity, its entry lost), before anything withdraws it from the store. Returns the unsubscribe.
   * With `withdraw: false` the engine never withdraws it on such news: the holder lets go itself (`release`) once
   * its work stopped, and until then, or until it lapses, the permit and what it holds stay where they are.
   */
  watch(permit: Permit, onLost: (reason: string) => void, options: { withdraw?: boolean } = {}): () => void {
    return this.news.watch(permit, onLost, options);
  }

  /**
   * Refreshes this instance's `permit` and, in the same compare-and-set, applies `change` (allocations: claim or
   * give back resources, write the plan in the annex). `change` may run several times (once per conflicting
   * write) and must be pure. A permit that no longer holds is denied and nothing is written: unlike
   * {@link refresh}, this never withdraws the permit, since its holder lets go itself once its work stopped.
   */
  amend<T>(permit: Permit, change: (input: AmendInput) => Amendment<T>, { local = false }: DecideOptions = {}): Promise<AmendResult<T>> {
    return this.amendments.amend(permit, change, local);
  }

  /**
   * A denial if this node's view already shows that `permit` no longer holds (revoked, excluded by an edit, its
   * entry lost) — news that may have arrived before anything watched the permit; `undefined` otherwise.
   */
  newsAgainst(permit: Permit): AcquireResult & { granted: false } | undefined {
    return this.news.against(permit);
  }

  /** The permits this instance believes it holds (as of its last successful grant or refresh). */
  heldPermits(): Permit[] {
    return this.held.values();
  }

  /** Stops listening to the store. */
  dispose(): void {
    this.unwatchStore();
    this.waits.dispose();
  }

  /** The deadline of a decision on `semaphore`: a quarter of its duration, at most `storeTimeoutMs`. */
  private deadlineFor(semaphore: string, what: string): Deadline {
    const durationMs = this.store.peek(semaphore)?.entry?.definition?.durationMs;
    const budget = decisionBudgetMs(durationMs, this.storeTimeoutMs);
    return new Deadline(budget, `Semaphore "${semaphore}": ${what}`);
  }

  /**
   * Whether an answer may stand on what this node knows of an entry: only while connected with nothing missed
   * since the view was last re-read, and only if the store confirmed it within one permit duration (events can
   * be lost silently; the holder writes every half duration, so a node that hears nothing for longer asks).
   */
  private young(known: ObservedEntry): boolean {
    return this.store.isConnected() && known.ageMs <= (known.entry?.definition?.durationMs ?? UNKNOWN_SEMAPHORE_AGE_MS);
  }

  /**
   * Waits, up to the head start, for news of a slot the view shows free when the instance that released it with a
   * hold is likely to take it again at this tick (see {@link givesWayToIncumbents}). True when it waited.
   */
  private async gaveWay(semaphore: string): Promise<boolean> {
    const view = this.store.peek(semaphore);
    const durationMs = view?.entry?.definition?.durationMs;
    if (!view || durationMs === undefined || this.headStartMs <= 0 || !this.young(view)) return false;
    if (!givesWayToIncumbents(view.entry, this.holder, this.clock.now(), this.skewMs)) return false;
    await this.waits.next(semaphore, Math.min(this.headStartMs, durationMs * HEAD_START_FRACTION));
    return true;
  }

  private decideLocally(semaphore: string, rule: (entry: SemaphoreEntry | undefined, now: number) => PermitDecision): AcquireResult | undefined {
    const view = this.store.peek(semaphore);
    if (!view || !this.young(view)) return undefined;
    const durationMs = view.entry?.definition?.durationMs;
    const now = this.clock.now();
    const decision = rule(view.entry, now);
    if (decision.outcome === 'denied') return decision.next ? undefined : denied(semaphore, decision.reason, decision.message);
    if (decision.outcome !== 'refreshed' || durationMs === undefined) return undefined;
    const own = view.entry?.permits.find((p) => p.fencingToken === decision.permit.fencingToken);
    if (!own || !answersFromView(own.expiresAt, this.skewMs, now, durationMs)) return undefined;
    if (this.held.wasLetGo(semaphore, own.fencingToken)) return undefined; // released, maybe not yet landed
    this.held.set(semaphore, own);
    return { granted: true, outcome: 'held', permit: own };
  }

  /** `token`: the permit the decision is about (a refresh); a denial forgets only it. Without one (an acquire), whatever is held. */
  private async decide(
    semaphore: string,
    local: boolean,
    token: number | undefined,
    rule: (entry: SemaphoreEntry | undefined, now: number) => PermitDecision,
  ): Promise<AcquireResult> {
    const refused = this.refusedBelowQuorum(semaphore);
    if (refused) return refused;
    try {
      const answer = local ? this.decideLocally(semaphore, rule) : undefined;
      if (answer) return answer;
      if (local && (await this.gaveWay(semaphore))) {
        const refusedNow = this.refusedBelowQuorum(semaphore); // asked again: the wait may have outlasted the cluster
        if (refusedNow) return refusedNow;
        const after = this.decideLocally(semaphore, rule);
        if (after) return after;
      }
      const deadline = this.deadlineFor(semaphore, 'decision');
      let decision: PermitDecision | undefined;
      for (let rebuilt = 0; rebuilt < 2; rebuilt++) {
        let missing: VersionedEntry | undefined;
        decision = await compareAndSetLoop(this.store, semaphore, (read) => this.attempt(read, rule, (r) => (missing = r)), {
          maxAttempts: this.maxAttempts,
          deadline,
          known: this.store.peek(semaphore),
          trust: (known) => local && this.young(known),
        });
        if (!missing || !(await this.rebuild(semaphore, missing))) break;
      }
      if (!decision) return denied(semaphore, DenyReason.CONTENTION, `lost compare-and-set ${this.maxAttempts} times in a row`);
      if (decision.outcome === 'denied') {
        this.held.delete(semaphore, token);
        return denied(semaphore, decision.reason, decision.message);
      }
      this.held.set(semaphore, decision.permit);
      const { outcome, permit, vacantSince } = decision;
      return vacantSince === undefined ? { granted: true, outcome, permit } : { granted: true, outcome, permit, vacantSince };
    } catch (error) {
      return this.failClosed.storeFailure(semaphore, error);
    }
  }

  /** Below the quorum of visible members nothing is decided; with no quorum set there is nothing to count (no call). */
  private refusedBelowQuorum(semaphore: string): PermitDenied | undefined {
    return this.options.quorum === undefined ? undefined : this.failClosed.refusedBelowQuorum(semaphore);
  }

  /** Asks the owner to put back an absent entry; a failure to do so is a denial like any other, not a throw. */
  private async rebuild(semaphore: string, read: VersionedEntry): Promise<boolean> {
    try {
      return (await this.options.onMissing?.(semaphore, read)) ?? false;
    } catch {
      return false;
    }
  }

  /** One attempt of a decision: a withdrawal of this instance's own permit tells its work before the write. */
  private attempt(
    read: VersionedEntry,
    rule: (entry: SemaphoreEntry | undefined, now: number) => PermitDecision,
    onMissing: (read: VersionedEntry) => void,
  ): Attempt<PermitDecision> {
    const now = this.clock.now();
    const decision = rule(read.entry, now);
    if (read.raw === null) onMissing(read);
    if (!decision.next || !read.entry) return { result: decision };
    const denial = decision.outcome === 'denied' ? decision : undefined;
    const withdrawn = denial?.withdrawn;
    return {
      result: decision,
      write: stampEntry(read.entry, decision.next),
      notBefore: lapsedOnStoreBy(read.entry, decision.next, now, this.skewMs),
      beforeWrite: withdrawn && denial ? () => this.news.notify(withdrawn.semaphore, withdrawn.fencingToken, `${denial.reason}: ${denial.message}`) : undefined,
    };
  }
}
