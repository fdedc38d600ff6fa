import type { MissedReason } from './record-map';

/**
 * Whether a view may answer for the store: the state machine of its suspicion. A view turns *suspect* when the feed
 * drops, says changes may have been missed, or a call fails in a way that may have hidden some (a timeout, a write
 * whose connection dropped); it is trusted again only once a resync (a full re-read) ran to its end after the latest
 * reason. Reasons that come while a resync runs make it run again, so no loss is taken for made up.
 */
export class ViewTrust {
  /** Whether the view is in use (opened and not closed): a closed view is never suspect, and never resyncs. */
  private active = false;
  /** Set when the connection dropped or a call failed: missed changes must be made up for by a re-read. */
  private suspect = false;
  /** Between a 'disconnected' and the next 'reconnected' of the feed. */
  private offline = false;
  private resyncing?: Promise<void>;
  /** Counts reasons to distrust the view, so a resync that began before the latest one runs again. */
  private distrusted = 0;

  constructor(
    /** One full re-read of the view (throws while the store is unreachable). */
    private readonly reread: () => Promise<void>,
    /** Told when the feed dropped, and when a resync ran to its end. */
    private readonly told: { disconnected(): void; resynced(): void | Promise<void> },
  ) {}

  /** The view was opened (and read whole): trusted from now on, until a reason comes not to. */
  start(): void {
    this.active = true;
  }

  /** The view was closed: nothing more to distrust or resync. */
  stop(): void {
    this.active = false;
  }

  /** Whether the view is open (what a late answer needs to be recorded, online or not). */
  isActive(): boolean {
    return this.active;
  }

  /** Whether the view is open and the feed has not said it is down. */
  online(): boolean {
    return this.active && !this.offline;
  }

  /** Whether nothing since the last resync suggests changes were missed. */
  trusted(): boolean {
    return !this.suspect;
  }

  /** The feed says changes may have been missed. */
  missed(reason: MissedReason): void {
    if (!this.active) return;
    if (reason === 'disconnected') {
      this.offline = true;
      this.suspect = true;
      this.told.disconnected();
    } else if (reason === 'reconnected') {
      // Whatever changed while it was down was not heard, also when no 'disconnected' came before (a feed may only
      // notice its drop once it is back).
      this.offline = false;
      void this.distrust();
    } else {
      void this.distrust();
    }
  }

  /** Changes may have been missed, or data lost: distrust the view until a resync, which starts now (and settles with it). */
  distrust(): Promise<void> {
    if (!this.active) return Promise.resolve();
    this.suspect = true;
    this.distrusted++;
    return this.resync();
  }

  /** A call failed in a way that may have hidden changes: distrust the view; the next call that works resyncs it. */
  callFailed(): void {
    this.suspect = this.active;
  }

  /**
   * A call worked: the store is reachable, so a suspect view is read again now (an injected client tells no reconnect);
   * settles with that resync.
   */
  callWorked(): Promise<void> {
    return this.suspect && this.active ? this.resync() : Promise.resolve();
  }

  /** Re-reads the view until no reason to distrust it came while it ran; a failure leaves it to the next reason. */
  private resync(): Promise<void> {
    this.resyncing ??= (async () => {
      try {
        for (let generation = -1; generation !== this.distrusted; ) {
          generation = this.distrusted;
          await this.reread();
          // A re-read while the feed is down (a call worked meanwhile) cannot vouch for what changes before it listens
          // again: the view stays suspect until the resync that 'reconnected' starts.
          if (generation === this.distrusted && !this.offline) this.suspect = false;
        }
        await this.told.resynced();
      } catch {
        // Still unreachable: the next reconnect or successful call tries again.
      } finally {
        this.resyncing = undefined;
      }
    })();
    return this.resyncing;
  }
}
