/**
 * What the backend uses of an `ioredis` client: an `ioredis` `Redis` (or `Cluster`) is one. Spelled out here so that
 * this package's types need no `ioredis` installed.
 */
export interface RedisClient {
  /** Defines a Lua script as a command, called by its SHA (`EVALSHA`, loaded again on `NOSCRIPT`). */
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  /** Sends one command. */
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  /**
   * A new connection with the same options, some overridden (a `Redis`'s `duplicate(options)`; a `Cluster`'s is
   * `duplicate(startupNodes, options)`): the backend's own connections, made like the application's client.
   */
  duplicate(...overrides: unknown[]): RedisClient;
  /** The connection's state (`'ready'` when commands go through). */
  readonly status: string;
  /** Connects (a client made with `lazyConnect`). */
  connect(): Promise<void>;
  /** Closes the connection after the commands sent. */
  quit(): Promise<unknown>;
  /** Closes the connection now. */
  disconnect(reconnect?: boolean): void;
  /** Subscribes this connection to `channels` (the change feed's). */
  subscribe(...channels: string[]): Promise<unknown>;
  /** Unsubscribes this connection from `channels`. */
  unsubscribe(...channels: string[]): Promise<unknown>;
  /** Listens to a connection event (`message`, `ready`, `close`, `error`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as ioredis's own (a Cluster's listeners take any[])
  on(event: string, listener: (...args: any[]) => void): unknown;
}

/** How a {@link RedisBackend} reaches Redis and names what it keeps. */
export interface RedisBackendOptions {
  /**
   * The application's own `ioredis` client (`new Redis(...)`, or a `Cluster`), as the model of the backend's
   * connections: the backend sends nothing on it and never closes it, but opens two connections like it
   * (`duplicate()`: its address, credentials, TLS, Sentinel or Cluster nodes), one for its calls and one to hear
   * changes. Those never send a command twice or late: no offline queue, no retry of a command in flight, no resend
   * on reconnect (`enableOfflineQueue: false`, `maxRetriesPerRequest: 0`, `autoResendUnfulfilledCommands: false`).
   * A compare-and-set sent again on a new connection would answer "not written" for the write its first run made.
   * Give this, `url` or `connection`.
   */
  client?: RedisClient;
  /** A Redis URL (`redis://user:password@host:6379/0`, `rediss://` for TLS): the backend makes a client of its own. */
  url?: string;
  /**
   * Options of a client of the backend's own: ioredis's `RedisOptions` (`host`, `port`, `sentinels`, `tls`, ...).
   * `enableOfflineQueue`, `maxRetriesPerRequest` and `autoResendUnfulfilledCommands` are the backend's (see `client`).
   */
  connection?: Record<string, unknown>;
  /**
   * The hash tag and prefix of every key the library keeps (`{<prefix>}:...`: one Redis Cluster slot, so each of its
   * scripts may touch them all). Default `'gatekeeper'`.
   */
  mapPrefix?: string;
  /** Deadline of a call given none, in ms. Default 10 s. */
  callTimeoutMs?: number;
  /**
   * Replicas every write a decision rests on (a grant, a claim, a counter) must reach before it counts as done
   * (`WAIT`, one more round trip per write): an acknowledged grant then survives a failover to one of them. A write
   * that reaches fewer within its deadline fails closed. Default 0: the primary's answer is enough, and a failover to
   * a replica that missed writes is found as a loss (see Redis in production).
   */
  minReplicas?: number;
  /** How often the subscriber connection is checked (a message published must come back on it), in ms. Default 5 s. */
  listenCheckMs?: number;
  /**
   * Told when Redis turns out to have lost writes it acknowledged (a restart that lost its data or its last writes, a
   * replica promoted before it had them): `forgotten` names the records dropped (permits, rebuilt after a recovery
   * wait). Default: one `console.error` line. The module logs it as an ERROR.
   */
  onLostData?: (report: RedisLostData) => void;
  /**
   * Told once at open when Redis keeps nothing on disk (`appendonly no`): a restart then loses every permit, runtime
   * schedule and run history, and the library waits out a recovery after it. Also told when Redis's eviction policy
   * cannot be read (`CONFIG` and `INFO memory` refused) or cannot be judged, or is `allkeys-*` with no `maxmemory` yet.
   * Default: one `console.warn` line. The module logs it as a WARN.
   */
  onWarning?: (message: string) => void;
  /**
   * Told when Redis is set up so that it may delete the library's keys: an `allkeys-*` `maxmemory-policy` with a
   * `maxmemory` (checked at open and on every reconnect, said once per change). Such a Redis may drop a permit while
   * its holder runs, and every eviction the library finds is a loss and a recovery wait. Default: one `console.error`
   * line. The module logs it as an ERROR.
   */
  onUnsafeConfig?: (message: string) => void;
}

/** What a {@link RedisBackend} found when Redis had lost writes (see `RedisBackendOptions.onLostData`). */
export interface RedisLostData {
  /** The key prefix of the library's keys. */
  readonly prefix: string;
  /**
   * Why it counts as a loss of writes: `'empty'`, no incarnation key (a restart without persistence, a flush, the
   * keys evicted or deleted, or a new store not declared new); `'restarted'`, another incarnation than the one a node
   * knew (the library's keys replaced by another store's); `'behind'`, fewer writes than a node saw (a restart or a
   * failover that lost the last ones, or keys evicted or deleted); and for state written under another server's
   * replication id: `'failed-over'`, a replica of the server that wrote it, promoted (its `master_replid2`);
   * `'reloaded'`, another server process (`run_id`): a restart that read its append-only file or snapshot, or another
   * server started on a copy of them; `'replaced'`, neither could be told.
   */
  readonly cause: 'empty' | 'restarted' | 'behind' | 'failed-over' | 'reloaded' | 'replaced';
  /** Since when (epoch ms, the server's clock) the state may have lost writes Redis had acknowledged. */
  readonly lostAt: number;
  /** The records dropped as leases that may be stale (`<map> <key>`), by the node whose call found the loss. */
  readonly forgotten: readonly string[];
  /**
   * Whether the store came back with every write the node that found the loss had seen (its write count at least the
   * highest that node saw, and it had seen some). With `cause: 'reloaded'` it is a restart that lost nothing this node
   * knew of (a clean `SHUTDOWN` with the append-only file on), told as a warning; the recovery wait is the same, since
   * writes other nodes saw later cannot be checked from here.
   */
  readonly keptEveryWriteSeen: boolean;
}

/** Why a {@link RedisBackend} counts what it found as a loss of writes (see {@link RedisLostData.cause}). */
export type RedisLossCause = RedisLostData['cause'];
