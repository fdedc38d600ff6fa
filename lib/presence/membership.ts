import type { Clock } from '../core/clock';
import { GatekeeperError } from '../core/errors/gatekeeper.error';
import type { MembershipChanges, Presence, PresenceIdentity } from './presence';
import type { PresenceStore } from './presence-store';
import { PresenceTracker } from './presence.tracker';

/** Timing, policy and reports of {@link Membership}. */
export interface MembershipOptions {
  /** How often this instance renews its entry and re-reads everyone's; also how long before a failed connect is tried again. */
  intervalMs: number;
  /** How long an announcement holds unless renewed. */
  ttlMs: number;
  /** Clock-skew bound. */
  clockSkewMs: number;
  /** Refuse to start unless presence confirmed that no older live instance uses this instance's acquirer name. */
  refuseDuplicateName: boolean;
  /** Told who joined and left each time the view of the live instances changes. */
  onChange(changes: MembershipChanges): void;
  /** Where warnings (presence unreachable, a name clash, unreadable entries) and debug lines go. */
  log: { warn(message: string): void; debug(message: string): void };
}

/**
 * This instance's membership in the cluster's presence map: connects the presence store and announces itself
 * ({@link PresenceTracker}); a store that cannot be reached is not fatal (it is tried again every interval) unless
 * duplicate names are refused, which also fails the start when an older live instance uses this acquirer name.
 * Warns once per instance of another live one under the same name, and withdraws and disconnects at stop.
 */
export class Membership {
  /** This instance's view of who is here (read directly on hot paths: a run now's eligibility). */
  readonly tracker: PresenceTracker;
  private readonly warnedClashes = new Set<string>();
  private starting?: Promise<void>;
  private retry?: NodeJS.Timeout;
  private stopped = false;
  /** Whether the presence store is connected (so stop() must withdraw and close it). */
  private connected = false;

  constructor(
    private readonly store: PresenceStore,
    private readonly self: PresenceIdentity,
    clock: Clock,
    private readonly options: MembershipOptions,
  ) {
    this.tracker = new PresenceTracker(store, self, clock, {
      intervalMs: options.intervalMs,
      ttlMs: options.ttlMs,
      clockSkewMs: options.clockSkewMs,
      onChange: (changes) => {
        this.warnOfClashes();
        options.onChange(changes);
      },
      onError: (error) => options.log.debug(`presence: ${(error as Error).message}`),
    });
  }

  /** The live app instances, oldest first (the same order on every node). */
  participants(): Presence[] {
    return this.tracker.live();
  }

  /** The live instances while the view is confirmed (by the cluster within two intervals), else `undefined`. */
  confirmedParticipants(): Presence[] | undefined {
    return this.tracker.confirmed();
  }

  /** This instance's own entry among {@link participants}, once announced. */
  current(): Presence | undefined {
    return this.participants().find((p) => p.instance === this.self.instance);
  }

  /** Acquirer names more than one live instance uses, with those instances. */
  nameClashes(): Map<string, Presence[]> {
    return this.tracker.clashes();
  }

  /** How long ago the cluster last confirmed the view (`undefined` before it first did). */
  viewAgeMs(): number | undefined {
    return this.tracker.ageMs();
  }

  /** Announces where this instance's HTTP server answers (now, if announcing already). */
  advertise(httpAddress: string): Promise<void> {
    return this.tracker.advertise(httpAddress);
  }

  /** Connects and announces this instance (once; again after a failure that was tried again). */
  start(): Promise<void> {
    this.starting ??= this.connect();
    return this.starting;
  }

  /** Withdraws this instance, so others see it leave at once, and disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.starting?.catch(() => undefined);
    await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    await this.tracker.stop();
    await this.store.close();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const { refuseDuplicateName: refuse, intervalMs, log } = this.options;
    try {
      await this.store.connect({ corruptValue: (key, reason) => log.warn(`presence: ignoring unreadable entry "${key}" (${reason})`) });
      this.connected = true;
      if (this.stopped) return; // stop() closes it
      await this.tracker.start();
    } catch (error) {
      if (this.connected) await this.store.close().catch(() => undefined);
      this.connected = false;
      if (refuse) throw new GatekeeperError(`Refusing to start: cannot check the acquirer name against live instances (membership.refuseDuplicateName): ${(error as Error).message}`, { cause: error });
      log.warn(`Presence is unavailable, trying again in ${intervalMs} ms: ${(error as Error).message}`);
      this.starting = undefined;
      this.retry = setTimeout(() => void this.start().catch(() => undefined), intervalMs);
      this.retry.unref();
      return;
    }
    if (refuse) await this.refuseNamesakes();
    this.warnOfClashes();
  }

  /** Fails the start unless presence read the live instances and none older uses this instance's acquirer name. */
  private async refuseNamesakes(): Promise<void> {
    if (this.tracker.ageMs() === undefined) {
      await this.disconnect();
      throw new GatekeeperError('Refusing to start: presence could not read the live instances (membership.refuseDuplicateName)');
    }
    const me = this.current();
    const namesakes = this.nameClashes().get(this.self.acquirer) ?? [];
    const older = namesakes.filter((p) => p.instance !== this.self.instance && (!me || p.startedAt < me.startedAt || (p.startedAt === me.startedAt && p.instance < me.instance)));
    if (older.length === 0) return;
    await this.disconnect();
    throw new GatekeeperError(
      `Refusing to start: acquirer name "${this.self.acquirer}" is already used by live instance(s) ` +
        `${older.map((p) => p.instance).join(', ')} (membership.refuseDuplicateName); give this process its own name`,
    );
  }

  private warnOfClashes(): void {
    for (const other of this.nameClashes().get(this.self.acquirer) ?? []) {
      if (other.instance === this.self.instance || this.warnedClashes.has(other.instance)) continue;
      this.warnedClashes.add(other.instance);
      this.options.log.warn(
        `Another live instance (${other.instance}, started ${new Date(other.startedAt).toISOString()}) uses this node's acquirer name ` +
          `"${this.self.acquirer}": permits belong to instances, so both work, but logs and acquirer patterns cannot tell them apart`,
      );
    }
  }
}
