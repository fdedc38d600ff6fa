import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { withDeadline } from '../../core/with-deadline';
import { FeedWatches } from '../../store/feed-watches';
import type { MissedReason, RecordChanges, Unwatch } from '../../store/record-map';
import type { RedisClient } from './redis-backend.options';

/**
 * What the scripts publish (see `tell` in `redis-script-prelude.ts`), a change as `w<len>:<map><len>:<key><value>` (written)
 * or `r<len>:<map><len>:<key>` (removed), lengths in bytes, nothing escaped; `l` says a call found the store lost data
 * (every view reads again, and learns the loss from its answer); `p<id>` is a feed's check of itself.
 */
const WRITTEN = 0x77; // 'w'
const REMOVED = 0x72; // 'r'
const PROBE = 0x70; // 'p'
const LOST = 0x6c; // 'l'
const COLON = 0x3a;

/** What a {@link RedisFeed} needs from its backend. */
export interface RedisFeedContext {
  /** A connection of its own for `SUBSCRIBE` (the backend's client, duplicated). */
  subscriber(): RedisClient;
  /** Publishes `payload` on the channel from the backend's client (the feed's check of itself). */
  publish(payload: string): Promise<void>;
  readonly channel: string;
  /** Unique to the backend instance: its connection checks' ids. */
  readonly mark: string;
  /** How often the subscriber is checked, and how long a check may take, in ms. */
  readonly checkEveryMs: number;
}

/**
 * The change feed of every record map of one Redis backend: one subscriber connection on the prefix's channel, where
 * the scripts publish each change as they make it. A message is lost with its connection: when the subscriber drops
 * (its `close`, or a check whose message does not come back in time) every watch is told `disconnected`, and once it
 * is subscribed again `reconnected`, so each view re-reads what it relies on.
 */
export class RedisFeed {
  private sub?: RedisClient;
  private starting?: Promise<void>;
  private readonly watches: FeedWatches;
  private closed = false;
  private subscribed = false;
  private wasLost = false;
  private check?: NodeJS.Timeout;
  private probes = 0;
  private probe?: { readonly id: string; readonly heard: () => void };
  /** Channels of their own beside the changes' (see {@link subscribe}), and who hears each. */
  private readonly channels = new Map<string, () => void>();

  constructor(private readonly context: RedisFeedContext) {
    this.watches = new FeedWatches();
  }

  /** Starts telling `changes` of map `map`; resolves once the feed is subscribed. */
  async watch(map: string, name: string, changes: RecordChanges, exceptMark: string | undefined): Promise<Unwatch> {
    if (this.closed) throw new StoreUnavailableError(`cannot watch ${name}: the Redis backend is closed`);
    try {
      await this.listening();
    } catch (error) {
      throw new StoreUnavailableError(`cannot watch ${name}: Redis SUBSCRIBE failed: ${(error as Error).message}`, { cause: error });
    }
    return this.watches.add(map, changes, exceptMark);
  }

  /**
   * Calls `listener` with each message on `channel` too (a channel of one instance: a task worker's wake-ups), on the
   * same subscriber; resolves once subscribed. Its messages are lost with the subscriber as the changes are, and the
   * watches are told so. Returns what unsubscribes it.
   */
  async subscribe(channel: string, listener: () => void): Promise<() => Promise<void>> {
    if (this.closed) throw new StoreUnavailableError(`cannot subscribe to ${channel}: the Redis backend is closed`);
    await this.listening();
    this.channels.set(channel, listener);
    await this.sub!.subscribe(channel);
    return async () => {
      if (this.channels.get(channel) !== listener) return;
      this.channels.delete(channel);
      await this.sub?.unsubscribe(channel).catch(() => undefined);
    };
  }

  /** Tells every watch that changes may have been missed (the backend found Redis lost data). */
  missed(reason: MissedReason): void {
    this.watches.tellAll(reason);
  }

  /** Unsubscribes and closes the subscriber. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.check);
    this.watches.clear();
    await this.starting?.catch(() => undefined);
    const sub = this.sub;
    this.sub = undefined;
    sub?.disconnect(false);
  }

  /** The subscriber, subscribed: made once; ioredis reconnects and subscribes it again by itself after a drop. */
  private listening(): Promise<void> {
    if (this.subscribed) return Promise.resolve();
    return (this.starting ??= this.start().finally(() => (this.starting = undefined)));
  }

  private async start(): Promise<void> {
    if (!this.sub) {
      const sub = this.context.subscriber();
      this.sub = sub;
      sub.on('messageBuffer', (channel: Buffer, message: Buffer) => {
        if (this.channels.size > 0) {
          const own = this.channels.get(channel.toString());
          if (own) return own();
        }
        this.heard(message);
      });
      sub.on('close', () => this.lost());
      sub.on('ready', () => void this.ready(sub));
      sub.on('error', () => undefined); // told by 'close'; ioredis reconnects
      if (sub.status === 'wait') await sub.connect();
    }
    await this.sub.subscribe(this.context.channel);
    this.subscribed = true;
    clearInterval(this.check);
    this.check = setInterval(() => void this.checkConnection(), this.context.checkEveryMs);
    this.check.unref();
  }

  /** The subscriber connected again (ioredis subscribes it again): once subscribed, the watches read again. */
  private async ready(sub: RedisClient): Promise<void> {
    if (!this.wasLost || this.closed || sub !== this.sub) return;
    try {
      await sub.subscribe(this.context.channel, ...this.channels.keys());
    } catch {
      return; // dropped again: told by 'close'
    }
    this.subscribed = true;
    this.wasLost = false;
    this.watches.tellAll('reconnected');
  }

  private lost(): void {
    if (this.closed || !this.subscribed) return;
    this.subscribed = false;
    this.wasLost = true;
    this.watches.tellAll('disconnected');
  }

  /** A message published from the backend's client must come back on the subscriber in time, or it counts as lost. */
  private async checkConnection(): Promise<void> {
    if (this.probe || !this.subscribed) return;
    const id = `${this.context.mark}.${++this.probes}`;
    const heard = new Promise<void>((resolve) => (this.probe = { id, heard: resolve }));
    try {
      await withDeadline(Promise.all([this.context.publish(`p${id}`), heard]), this.context.checkEveryMs, 'check the Redis subscriber');
    } catch {
      // Deaf or gone: drop it, as if it had failed; ioredis connects and subscribes it again.
      this.lost();
      this.sub?.disconnect(true);
    } finally {
      this.probe = undefined;
    }
  }

  private heard(message: Buffer): void {
    const kind = message[0];
    if (kind === PROBE) {
      if (this.probe && message.toString('utf8', 1) === this.probe.id) this.probe.heard();
      return;
    }
    if (kind === LOST) {
      this.watches.tellAll('lost-data');
      return;
    }
    if (kind !== WRITTEN && kind !== REMOVED) return;
    const map = field(message, 1);
    const key = map && field(message, map.end);
    if (!map || !key) return;
    this.watches.tell(map.text, key.text, kind === WRITTEN ? message.toString('utf8', key.end) : null);
  }
}

/** The field `<len>:<bytes>` of `message` at `at`, and where the next starts; `undefined` if it is not one. */
function field(message: Buffer, at: number): { text: string; end: number } | undefined {
  const colon = message.indexOf(COLON, at);
  if (colon < 0 || colon === at) return undefined;
  const length = Number(message.toString('latin1', at, colon));
  const end = colon + 1 + length;
  if (!Number.isInteger(length) || end > message.length) return undefined;
  return { text: message.toString('utf8', colon + 1, end), end };
}
