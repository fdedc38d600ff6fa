import type { Clock } from '../core/clock';
import type { MembershipChanges, Presence, PresenceIdentity } from './presence';
import { announcement, livePresences, membershipChanges, nameClashes } from './presence.rules';
import type { PresenceStore } from './presence-store';

/** Timing of presence. */
export interface PresenceTrackerOptions {
  /** How often this instance renews its entry. */
  intervalMs: number;
  /**
   * How often it re-reads everyone's whatever the feed says: the store's staleness policy (its `resyncEveryMs`);
   * `undefined` where the feed tells every loss, so a trusted view is re-read only when told.
   */
  resyncEveryMs?: number;
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
 * is down, and every `resyncEveryMs` where the feed can lose events without telling (Hazelcast). So while its calls
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
  /** When every entry was last read (`undefined` before the first read). */
  private readAt?: number;
  /** The feed is down (told `missed` with `down`, no reconnect since): re-read at each renewal until it is back. */
  private feedDown = false;
  /** Counts the feed's `missed`: a read begun before the latest one may predate the loss, and is not trusted. */
  private misses = 0;
  /** The view holds every change since `readAt` (a read after the feed's last `missed`, the feed up since). */
  private trusted = false;

  constructor(
    private readonly store: PresenceStore,
    private self: PresenceIdentity,
    private readonly clock: Clock,
    private readonly options: PresenceTrackerOptions,
  ) {
    if (!(options.ttlMs > options.intervalMs)) throw new RangeError(`presence ttlMs (${options.ttlMs}) must be more than intervalMs (${options.intervalMs})`);
  }

  /** Announces this instance, reads everyone, and keeps doing both every interval. */
  async start(): Promise<void> {
    this.running = true;
    // Changes the feed may have lost are read at once (after a read under way, which may predate the loss); while it
    // is down, at each renewal.
    this.unwatch = this.store.watch((instance, presence) => this.observe(instance, presence), (down) => {
      this.misses++;
      this.trusted = false;
      this.feedDown = down;
      if (!down) void (this.ticking ?? Promise.resolve()).then(() => this.tick());
    });
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

  /** How long ago the cluster last confirmed this view by a full re-read (`undefined` before the first). */
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
    try {
      await this.store.announce(announcement(this.self, this.clock.now(), this.options.ttlMs), { timeoutMs });
      if (this.readDue()) {
        const misses = this.misses;
        const everyone = await this.store.list({ timeoutMs });
        this.seen.clear();
        for (const p of everyone) this.seen.set(p.instance, p);
        this.readAt = this.clock.now();
        this.trusted = !this.feedDown && misses === this.misses;
      }
      // Read now, or trusted since its read: the write just made says the cluster answers.
      this.confirmedAt = this.clock.now();
    } catch (error) {
      this.options.onError?.(error);
    }
    this.report();
  }

  /** Whether this renewal must re-read every entry (see the class's comment). */
  private readDue(): boolean {
    if (this.readAt === undefined || !this.trusted) return true;
    const every = this.resyncEveryMs();
    return every !== undefined && this.clock.now() - this.readAt >= every;
  }

  private resyncEveryMs(): number | undefined {
    return 'resyncEveryMs' in this.options ? this.options.resyncEveryMs : this.store.resyncEveryMs;
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
