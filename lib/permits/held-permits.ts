import type { Clock } from '../core/clock';
import type { AcquireResult } from './acquire-result';
import { TRANSIENT_DENIALS } from './deny-reason';
import type { Holder, Permit } from './permit';
import { judgeHeld } from './permit.rules';
import type { PermitStore } from './permit-store';
import type { SemaphoreEntry } from './semaphore-entry';

/*
 * This instance's own permits, as its permit engine knows them: which it holds, lets go or lets go itself
 * ({@link HeldPermits}), and the news of their loss and who hears it ({@link PermitNews}).
 */

/**
 * What a {@link PermitEngine} remembers of its own instance's permits between decisions: the ones it holds (as of its
 * last grant or refresh), the ones it let go (never again held from the view, whatever the view shows, until the
 * view shows them gone), and the ones whose holder lets go itself once its work stopped.
 */
export class HeldPermits {
  private readonly held = new Map<string, Permit>();
  /** Tokens this instance released (or tried to), by semaphore: never again `held` from the view, whatever it shows. */
  private readonly letGo = new Map<string, Set<number>>();
  /**
   * Permits whose holder lets go itself once its work stopped, by semaphore: never withdrawn on news, until this
   * instance releases them or they are gone from the view (not when their watch ends: the holder may still be
   * winding its work down).
   */
  private readonly selfReleasing = new Map<string, Set<number>>();

  constructor(
    /** This instance, whose permits these are. */
    private readonly instance: string,
  ) {}

  get(semaphore: string): Permit | undefined {
    return this.held.get(semaphore);
  }

  set(semaphore: string, permit: Permit): void {
    this.held.set(semaphore, permit);
  }

  /** Forgets the permit held for `semaphore`; with `token`, only if that is the one held (a denial about an older one leaves a newer one held). */
  delete(semaphore: string, token?: number): void {
    if (token === undefined || this.held.get(semaphore)?.fencingToken === token) this.held.delete(semaphore);
  }

  values(): Permit[] {
    return [...this.held.values()];
  }

  /** This instance lets `token` go: it is held no more, and never again from the view (its release may land late). */
  letGoOf(semaphore: string, token: number): void {
    this.letGo.set(semaphore, (this.letGo.get(semaphore) ?? new Set()).add(token));
    if (this.held.get(semaphore)?.fencingToken === token) this.held.delete(semaphore);
  }

  /** Whether this instance let `token` go (its release may not have landed yet). */
  wasLetGo(semaphore: string, token: number): boolean {
    return this.letGo.get(semaphore)?.has(token) ?? false;
  }

  /** The holder of `token` lets it go itself once its work stopped: never withdraw it on news. */
  selfReleases(semaphore: string, token: number): void {
    this.selfReleasing.set(semaphore, (this.selfReleasing.get(semaphore) ?? new Set()).add(token));
  }

  isSelfReleasing(semaphore: string, token: number): boolean {
    return this.selfReleasing.get(semaphore)?.has(token) ?? false;
  }

  /** Whether anything of `name` is kept here (held, let go, or letting go itself): its entry's news matters. */
  tracks(name: string): boolean {
    return this.held.has(name) || this.letGo.has(name) || this.selfReleasing.has(name);
  }

  /** The view shows `name`'s entry now: forgets let-go and self-releasing tokens it shows gone, so the sets stay small. */
  forgetGone(name: string, entry: SemaphoreEntry | undefined): void {
    this.forgetLetGo(name, entry);
    this.forgetSelfReleasing(name, entry);
  }

  /** Forgets self-releasing tokens the view shows gone (released, or lapsed and pruned). */
  private forgetSelfReleasing(name: string, entry: SemaphoreEntry | undefined): void {
    const tokens = this.selfReleasing.get(name);
    if (!tokens || !entry) return; // an entry that vanished (data lost) is not news that its permit is gone for good
    for (const token of tokens) {
      if (!entry.permits.some((p) => p.fencingToken === token && p.instance === this.instance)) tokens.delete(token);
    }
    if (tokens.size === 0) this.selfReleasing.delete(name);
  }

  /** Forgets released tokens the view shows gone, so the sets stay as small as the releases in flight. */
  private forgetLetGo(name: string, entry: SemaphoreEntry | undefined): void {
    const tokens = this.letGo.get(name);
    if (!tokens) return;
    for (const token of tokens) {
      if (!entry?.permits.some((p) => p.fencingToken === token && p.instance === this.instance)) tokens.delete(token);
    }
    if (tokens.size === 0) this.letGo.delete(name);
  }
}

type OnLost = (reason: string) => void;

/**
 * The news this instance's view brings about its own permits (revoked, excluded by an edit, over capacity, its
 * entry lost), and who hears it: the work watching a permit is told at once, before anything withdraws the permit
 * from the store, and a permit this instance holds is then let go (`withdraw`) unless its holder lets go itself.
 * A watcher is told once at most, and a failing one never stops the others.
 */
export class PermitNews {
  private readonly watchers = new Map<string, Map<number, Set<OnLost>>>();

  constructor(
    private readonly store: PermitStore,
    private readonly holder: Holder,
    private readonly clock: Clock,
    private readonly skewMs: number,
    private readonly held: HeldPermits,
    /** Lets go of the permit with `token` at once, by a decision that writes it out (its work was told first). */
    private readonly withdraw: (semaphore: string, token: number) => void,
  ) {}

  /** Registers `onLost` for `permit` (see `PermitEngine.watch`); returns the unsubscribe function. */
  watch(permit: Permit, onLost: OnLost, { withdraw = true }: { withdraw?: boolean } = {}): () => void {
    const { semaphore, fencingToken } = permit;
    if (!withdraw) this.held.selfReleases(semaphore, fencingToken);
    const tokens = this.watchers.get(semaphore) ?? new Map<number, Set<OnLost>>();
    this.watchers.set(semaphore, tokens);
    const listeners = tokens.get(fencingToken) ?? new Set();
    tokens.set(fencingToken, listeners);
    listeners.add(onLost);
    return () => {
      listeners.delete(onLost);
      // Only remove the maps if they are still the ones registered here (a notify may have replaced them).
      if (listeners.size === 0 && tokens.get(fencingToken) === listeners) tokens.delete(fencingToken);
      if (tokens.size === 0 && this.watchers.get(semaphore) === tokens) this.watchers.delete(semaphore);
    };
  }

  /** Whether any permit of `semaphore` is watched. */
  watches(semaphore: string): boolean {
    return this.watchers.has(semaphore);
  }

  /** Tells every watcher of the permit, once; they are removed. */
  notify(semaphore: string, fencingToken: number, reason: string): void {
    const tokens = this.watchers.get(semaphore);
    const listeners = tokens?.get(fencingToken);
    if (!tokens || !listeners) return;
    tokens.delete(fencingToken);
    if (tokens.size === 0) this.watchers.delete(semaphore);
    for (const listener of listeners) {
      try {
        listener(reason);
      } catch {
        // a failing listener must not keep the others from hearing it
      }
    }
  }

  /**
   * A denial if this node's view already shows that `permit` no longer holds (revoked, excluded by an edit, its
   * entry lost) — news that may have arrived before anything watched the permit; `undefined` otherwise.
   */
  against(permit: Permit): AcquireResult & { granted: false } | undefined {
    const view = this.store.peek(permit.semaphore);
    if (!view) return undefined;
    const denial = judgeHeld(view.entry, this.holder, permit.fencingToken, this.clock.now(), this.skewMs);
    if (!denial || TRANSIENT_DENIALS.has(denial.reason)) return undefined;
    return { granted: false, semaphore: permit.semaphore, reason: denial.reason, message: denial.message };
  }

  /**
   * The view learnt of a change: a permit of this instance (held, or in use by running work) that no longer holds
   * is lost for its work at once (revoked, excluded by an edit, over capacity, entry lost), and then withdrawn
   * from the store, in that order.
   */
  heard(name: string, entry: SemaphoreEntry | undefined): void {
    this.held.forgetGone(name, entry);
    const heldToken = this.held.get(name)?.fencingToken;
    if (!this.watchers.has(name) && heldToken === undefined) return;
    const now = this.clock.now();
    const tokens = new Set(this.watchers.get(name)?.keys() ?? []);
    if (heldToken !== undefined) tokens.add(heldToken);
    for (const token of tokens) {
      const denial = judgeHeld(entry, this.holder, token, now, this.skewMs);
      if (!denial || TRANSIENT_DENIALS.has(denial.reason)) continue;
      const lettingGoItself = this.held.isSelfReleasing(name, token);
      this.notify(name, token, `${denial.reason}: ${entry ? denial.message : 'its entry is gone from the cluster (data lost)'}`);
      if (heldToken === token) this.held.delete(name);
      // Let go at once (a revoked slot frees only when its holder writes), with the work already told.
      if (denial.next && !lettingGoItself) this.withdraw(name, token);
    }
  }
}
