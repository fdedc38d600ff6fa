/**
 * What the backend uses of a node-postgres `Pool`: a `pg.Pool` is one. Spelled out here so that this package's types
 * need no `pg` installed.
 */
export interface PostgresPool {
  /** Runs one statement on a connection of the pool. */
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** Takes a connection of the pool (the backend's change feed holds one). */
  connect(): Promise<unknown>;
  /** Closes the pool (never called on a pool the application gave). */
  end(): Promise<void>;
}

/** How a {@link PostgresBackend} reaches the database and names what it keeps. */
export interface PostgresBackendOptions {
  /**
   * The application's own `pg.Pool`, shared (the backend never ends it). It holds one of the pool's connections
   * while it listens for changes. Give this, `connectionString` or `poolConfig`.
   */
  pool?: PostgresPool;
  /** A connection string (`postgres://user:password@host:5432/db`): the backend makes a pool of its own. */
  connectionString?: string;
  /** Options of a pool of the backend's own: node-postgres's `PoolConfig` (`host`, `user`, `max`, `ssl`, ...). */
  poolConfig?: Record<string, unknown>;
  /** The schema of the library's tables, created and migrated at start. Default `'gatekeeper'`. */
  schema?: string;
  /** Prefix of every map and counter name in the tables (`<prefix>.<map>`). Default `'gatekeeper'`. */
  mapPrefix?: string;
  /**
   * Deadline of a statement given none, in ms. Default 10 s. A pool of the backend's own also has the server cancel a
   * statement past it (`statement_timeout`, unless `poolConfig` sets one); give your own `pool` one too.
   */
  callTimeoutMs?: number;
  /**
   * How often the connection that listens for changes is checked, in ms (and with it, that the database is still the
   * one the state was written in). Default 5 s.
   */
  listenCheckMs?: number;
  /**
   * Told when the database turns out not to be the one the library's state was written in (restored from a backup,
   * or a replica promoted), so writes it acknowledged may be lost: `forgotten` names the records dropped (permits,
   * rebuilt after a recovery wait). Default: one `console.error` line. The module logs it as an ERROR.
   */
  onLostData?: (report: PostgresLostData) => void;
}

/** What a {@link PostgresBackend} found when its database had lost writes (see `PostgresBackendOptions.onLostData`). */
export interface PostgresLostData {
  /** The schema of the library's tables. */
  readonly schema: string;
  /** Since when (epoch ms, this node's clock) the state may have lost writes the database had acknowledged. */
  readonly lostAt: number;
  /** The records dropped as leases that may be stale (`<prefix>.<map> <key>`), by the node that found the loss. */
  readonly forgotten: readonly string[];
}
