import type { Clock } from '../core/clock';
import type { MembershipChanges, Presence, PresenceIdentity } from './presence';
import { announcement, livePresences, membershipChanges, nameClashes } from './presence.rules';
import type { PresenceStore } from './presence-store';
import { ViewTrust } from '../store/view-trust';

/** Timing of presence. */
export interface PresenceTrackerOptions {
  /** How often this instance renews its entry (its re-reads follow the store's `resyncEveryMs` and its feed). */
  intervalMs: number;
  /** How long an announcement holds unless renewed (more than `intervalMs`: a late renewal must not drop out). */
  ttlMs: number;
  /** Clock-skew bound: others' entries count as live until their expiry plus this. */
  clockSkewMs: number;
  /** Deadline of each store call. Default: `intervalMs`. */
  callTimeoutMs?: number;
  /** Told when instances join or leave this node's view of the live ones. */
  onChange?(changes: MembershipChanges, live: Presence[]): void;
  /** Told when a renewal or re-read fails (the view then ages; others see this instance expire after `ttlMs`). */
  onError?(error: unknown): void;
}

/**
 * This instance's presence: announces it every `intervalMs` (one write) and follows the map's events, re-reading every
 * entry (one read of all) at start, at once when the feed says it may have lost some, at each renewal while the feed
 * is down, and every `resyncEveryMs` where the feed can lose events without telling. So while its calls
 * succeed its view of who is live is as fresh as the feed's bound (a deaf PostgreSQL or Redis feed is found by its
 * check within two `listenCheckMs`) or that re-read ({@link ageMs} says how long ago the cluster last confirmed it;
 * while calls fail, entries still drop out at their expiry). An idle cluster on a telling feed thus costs one write per
 * node and interval, flat in the number of nodes. Another instance that stops renewing drops out of the view
 * `ttlMs + clockSkewMs` after its last renewal, judged from its entry alone; a graceful stop withdraws at once.
 */
export class PresenceTracker {
  private readonly seen = new Map<string, Presence>();
  private lastLive: Presence[] = [];
  private timer?: NodeJS.Timeout;
  private unwatch?: () => void;
  private running = false;
  private confirmedAt?: number;
  private ticking?: Promise<void>;
  /** When the last read of every entry began (`undefined` before the first read). */
  private readAt?: number;
  /** Whether the view missed nothing since its last read: the one rule every event-fed view follows. */
  private readonly trust = new ViewTrust(() => this.readAll(), { disconnected: () => undefined, resynced: () => (this.running ? this.report() : undefined) });

  constructor(
    private readonly store: PresenceStore,
    private self: PresenceIdentity,
    private readonly clock: Clock,
    private readonly options: PresenceTrackerOptions,
  ) {
    if (!(options.ttlMs > options.intervalMs)) throw new RangeError(`presence ttlMs (${options.ttlMs}) must be more than intervalMs (${options.intervalMs})`);
  }

  /** Announces this instance, reads everyone, and renews every interval (reading again as the class says). */
  async start(): Promise<void> {
    this.running = true;
    // Changes the feed may have lost are read at once (a read under way, which may predate the loss, runs again);
    // while it is down, at each renewal.
    this.unwatch = this.store.watch((instance, presence) => this.observe(instance, presence), (reason) => this.trust.missed(reason));
    await this.tick();
    if (!this.running) return; // stopped during the first tick
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  /**
   * Sets where this instance's HTTP server answers (learnt once the app listens) and, if announcing already,
   * announces it now rather than at the next interval.
   */
  async advertise(httpAddress: string): Promise<void> {
    if (this.self.httpAddress === httpAddress) return;
    this.self = { ...this.self, httpAddress };
    if (!this.running) return; // the first announcement carries it
    await this.ticking; // a renewal under way may have announced the entry without it
    await this.tick();
  }

  /** Stops renewing and withdraws this instance's entry, so others see it leave at once. */
  async stop(): Promise<void> {
    this.running = false;
    this.trust.stop();
    clearInterval(this.timer);
    this.unwatch?.();
    await this.ticking;
    await this.store.withdraw(this.self.instance, { timeoutMs: this.callTimeout() }).catch((error: unknown) => this.options.onError?.(error));
  }

  /** The live instances as this node sees them now, oldest first. */
  live(): Presence[] {
    return livePresences(this.seen.values(), this.clock.now(), this.options.clockSkewMs);
  }

  /**
   * The live instances while the view is confirmed (by the cluster within two intervals), else `undefined`: what
   * may be trusted to say that nobody can run something.
   */
  confirmed(): Presence[] | undefined {
    const age = this.ageMs();
    return age !== undefined && age <= 2 * this.options.intervalMs ? this.live() : undefined;
  }

  /** Acquirer names used by more than one live instance. */
  clashes(): Map<string, Presence[]> {
    return nameClashes(this.live());
  }

  /** How long ago the cluster last confirmed this view: a read, or a renewal while it missed nothing (`undefined` before the first). */
  ageMs(): number | undefined {
    return this.confirmedAt === undefined ? undefined : this.clock.now() - this.confirmedAt;
  }

  /** One renewal and re-read, now (the timer's work; also for tests). */
  tick(): Promise<void> {
    this.ticking ??= this.renewAndRead().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async renewAndRead(): Promise<void> {
    if (!this.running) return;
    const timeoutMs = this.callTimeout();
    const began = this.clock.now();
    try {
      await this.store.announce(announcement(this.self, this.clock.now(), this.options.ttlMs), { timeoutMs });
      if (this.readAt === undefined) {
        await this.readAll();
        this.trust.start();
      } else {
        // A suspect view is read again now that the store answers (at each renewal while the feed is down); on a feed
        // that can lose events without telling, also at the renewal nearest each `resyncEveryMs`.
        const every = this.store.resyncEveryMs;
        const due = every !== undefined && this.clock.now() - this.readAt >= every - this.options.intervalMs / 2;
        await (due ? this.trust.distrust() : this.trust.callWorked());
      }
      // Read in this renewal, or missed nothing since its read: the write just made says the cluster answers.
      if (this.trust.trusted() || this.readAt! >= began) this.confirmedAt = this.clock.now();
    } catch (error) {
      this.trust.callFailed();
      this.options.onError?.(error);
    }
    this.report();
  }

  /** Reads every entry: the view anew. */
  private async readAll(): Promise<void> {
    const began = this.clock.now();
    const everyone = await this.store.list({ timeoutMs: this.callTimeout() });
    this.seen.clear();
    for (const p of everyone) this.seen.set(p.instance, p);
    this.readAt = began;
  }

  private observe(instance: string, presence: Presence | null): void {
    if (presence) this.seen.set(instance, presence);
    else this.seen.delete(instance);
    this.report();
  }

  /** Tells the owner what changed in the live set since the last report (expiries are noticed at each tick). */
  private report(): void {
    const live = this.live();
    const changes = membershipChanges(this.lastLive, live);
    this.lastLive = live;
    if (changes.joined.length > 0 || changes.left.length > 0) this.options.onChange?.(changes, live);
  }

  private callTimeout(): number {
    return this.options.callTimeoutMs ?? this.options.intervalMs;
  }
}
