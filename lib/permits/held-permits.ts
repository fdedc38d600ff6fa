import type { Permit } from './permit';
import type { SemaphoreEntry } from './semaphore-entry';

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
