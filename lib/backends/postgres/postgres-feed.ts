import type { Notification, PoolClient } from 'pg';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { withDeadline } from '../../core/with-deadline';
import { FeedWatches } from '../../store/feed-watches';
import type { MissedReason, RecordChanges, Unwatch } from '../../store/record-map';
import { ident } from './postgres-sql';

/** What the `records` trigger sends (see `postgres-schema.ts`). */
interface Payload {
  /** The map (`<prefix>.<name>`). */
  readonly m?: string;
  readonly k?: string;
  /** The new value; absent for a removal. */
  readonly v?: string;
  /** The value was too large to send: read it. */
  readonly r?: true;
  /** Some fields of the written value instead of the value (a task's new claim: `{ claim }`). */
  readonly f?: Readonly<Record<string, unknown>>;
  /** The table was truncated. */
  readonly c?: true;
  /** A feed's check of itself (see `checkConnection`). */
  readonly p?: string;
}

/** What a {@link PostgresFeed} needs from its backend. */
export interface PostgresFeedContext {
  /** A connection of its own, held while the feed listens. */
  connect(): Promise<PoolClient>;
  /** Sends `payload` on the channel from another connection (the feed's check of itself). */
  notify(payload: string): Promise<void>;
  /** Reads one record's value (a change too large for a notification); `null` when there is none. */
  read(map: string, key: string): Promise<string | null>;
  readonly channel: string;
  /** Unique to the backend instance: its connection checks' ids. */
  readonly mark: string;
  /** How often the listening connection is checked, and how long a check may take, in ms. */
  readonly checkEveryMs: number;
}

/**
 * The change feed of every record map of one backend: one connection that `LISTEN`s on the schema's channel, where
 * the `records` trigger tells each change in commit order. A notification is lost with its connection: when the
 * connection fails (an error, its end, or a check that gets no answer) every watch is told `disconnected`, the
 * feed connects again with a growing pause, and once it listens again every watch is told `reconnected`, so each
 * view re-reads what it relies on.
 */
export class PostgresFeed {
  private client?: PoolClient;
  private starting?: Promise<void>;
  private readonly watches: FeedWatches;
  private closed = false;
  private retry?: NodeJS.Timeout;
  private check?: NodeJS.Timeout;
  private retryMs = RETRY_MIN_MS;
  /** Changes told in order: one too large to send waits for its read, and those after it wait for it. */
  private queue?: Promise<void>;
  private queued = 0;
  private probes = 0;
  /** The connection was lost since the feed last listened: the watches are told `reconnected` once it listens again. */
  private wasLost = false;
  /** The check under way: what it sent, and what it calls once that is heard. */
  private probe?: { readonly id: string; readonly heard: () => void };

  constructor(private readonly context: PostgresFeedContext) {
    this.watches = new FeedWatches();
  }

  /** Starts telling `changes` of map `stored` (its name `name`); resolves once the feed listens. */
  async watch(stored: string, name: string, changes: RecordChanges, exceptMark: string | undefined): Promise<Unwatch> {
    if (this.closed) throw new StoreUnavailableError(`cannot watch ${name}: the PostgreSQL backend is closed`);
    await this.listening(name);
    return this.watches.add(stored, changes, exceptMark);
  }

  /** Tells every watch that changes may have been missed (the backend found the database lost data). */
  missed(reason: MissedReason): void {
    this.watches.tellAll(reason);
  }

  /** Stops listening and lets go of the connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.check);
    this.watches.clear();
    await this.starting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.query(`UNLISTEN ${ident(this.context.channel)}`).catch(() => undefined);
      client.release();
    }
  }

  private async listening(name: string): Promise<void> {
    if (this.client) return;
    try {
      await this.startListening();
    } catch (error) {
      throw new StoreUnavailableError(`cannot watch ${name}: PostgreSQL LISTEN failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** One attempt to listen at a time, shared by whoever asks meanwhile (a watch, the retry). */
  private startListening(): Promise<void> {
    return (this.starting ??= this.listen().finally(() => (this.starting = undefined)));
  }

  private async listen(): Promise<void> {
    if (this.client) return;
    const client = await this.context.connect();
    const onNotification = (message: Notification) => this.heard(message.payload);
    const onGone = () => this.lost(client);
    client.on('notification', onNotification);
    client.on('error', onGone);
    client.on('end', onGone);
    try {
      await client.query(`LISTEN ${ident(this.context.channel)}`);
    } catch (error) {
      client.off('notification', onNotification);
      client.release(error as Error);
      throw error;
    }
    if (this.closed || this.client) {
      client.removeAllListeners('notification');
      client.release();
      return;
    }
    this.client = client;
    this.retryMs = RETRY_MIN_MS;
    clearInterval(this.check);
    this.check = setInterval(() => void this.checkConnection(client), this.context.checkEveryMs);
    this.check.unref();
    // Whoever listened again (the retry, or a watch made meanwhile), the watches made before hear it.
    if (this.wasLost) {
      this.wasLost = false;
      this.watches.tellAll('reconnected');
    }
  }

  /**
   * A notification sent from another connection must come back on this one in time, or its notifications may be
   * lost: a connection that stopped answering, or one that never hears any (behind a pooler in transaction mode,
   * where LISTEN does nothing), is as gone as one that failed.
   */
  private async checkConnection(client: PoolClient): Promise<void> {
    if (this.probe) return;
    const id = `${this.context.mark}.${++this.probes}`;
    const heard = new Promise<void>((resolve) => (this.probe = { id, heard: resolve }));
    try {
      await withDeadline(Promise.all([this.context.notify(JSON.stringify({ p: id })), heard]), this.context.checkEveryMs, 'check the LISTEN connection');
    } catch {
      this.lost(client);
    } finally {
      this.probe = undefined;
    }
  }

  private lost(client: PoolClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    clearInterval(this.check);
    client.removeAllListeners('notification');
    try {
      client.release(new Error('the LISTEN connection failed'));
    } catch {
      // Released already.
    }
    this.wasLost = true;
    this.watches.tellAll('disconnected');
    this.reconnect();
  }

  private reconnect(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      // A watch made meanwhile may have listened again already.
      if (this.client || this.closed) return;
      void this.startListening().then(
        () => undefined,
        () => {
          this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
          this.reconnect();
        },
      );
    }, this.retryMs);
    this.retry.unref();
  }

  private heard(raw: string | undefined): void {
    let payload: Payload;
    try {
      payload = JSON.parse(raw ?? '') as Payload;
    } catch {
      return;
    }
    if (payload.p !== undefined) {
      if (payload.p === this.probe?.id) this.probe.heard();
      return;
    }
    if (payload.c) {
      this.watches.tellAll('cleared');
      return;
    }
    const { m: map, k: key } = payload;
    if (typeof map !== 'string' || typeof key !== 'string' || !this.watches.has(map)) return;
    const fields = payload.f !== null && typeof payload.f === 'object' ? payload.f : undefined;
    if (payload.r || this.queued > 0) {
      // After the reads under way, in order.
      this.queued++;
      this.queue = (this.queue ?? Promise.resolve()).then(async () => {
        try {
          if (fields) {
            this.watches.tellFields(map, key, fields);
            return;
          }
          const value = payload.r ? await this.context.read(map, key).catch(() => undefined) : payload.v ?? null;
          // A read that failed loses this change: the watches are told so, and to read again (the feed still listens).
          if (value === undefined) {
            this.watches.tellMap(map, 'disconnected');
            this.watches.tellMap(map, 'reconnected');
          } else {
            this.watches.tell(map, key, value);
          }
        } finally {
          this.queued--;
        }
      });
      return;
    }
    if (fields) this.watches.tellFields(map, key, fields);
    else this.watches.tell(map, key, payload.v ?? null);
  }
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
