/** The innermost error of `error`'s `cause` chain that carries a `code` (a driver's or the OS's), else `error`. */
export function rootCause(error: unknown): { code?: string; message: string } {
  let found: { code?: string; message: string } = { message: error instanceof Error ? error.message : String(error) };
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 8; at = (at as Error & { cause?: unknown }).cause, depth++) {
    const code = (at as Error & { code?: unknown }).code;
    if (typeof code === 'string') found = { code, message: at.message };
    else if (found.code === undefined) found = { message: at.message };
  }
  return found;
}

/**
 * The server a backend connects to, as start-up and its errors name it (`PostgreSQL at postgres://app:***@db/app`,
 * from `postgres.connectionString`), and what a failed connect to it was: see `StoreBackend.describe`.
 */
export interface ConnectTarget {
  /** What the server is: `PostgreSQL`, `Redis`. */
  readonly name: string;
  /** Its address without the password (or what was given instead of one). */
  readonly address: string;
  /** Where the address came from: the module's option (`postgres.connectionString`) or an environment variable. */
  readonly source: string;
  /** Tells a failed connection's kind from the driver's error, with the server's or driver's own words. */
  readonly failure: (error: unknown) => {
    /**
     * Whether start-up may wait it out or fails at once: `'unreachable'` (nothing answered, or the server is not
     * ready yet: start-up waits, up to `connectTimeout`), `'refused-login'` (the server refused the user or password)
     * or `'missing-database'` (the server has no such database): waiting does not help those two.
     */
    readonly kind: 'unreachable' | 'refused-login' | 'missing-database';
    /** The server's or driver's own words. */
    readonly detail: string;
  };
}

/** What a backend says of a failed connection (see {@link ConnectTarget.failure}). */
export type ConnectFailure = ReturnType<ConnectTarget['failure']>;

/** `host:port/database` of a connection given as parts (`localhost` when no host is given), for a {@link ConnectTarget}. */
export function hostAddress(host: unknown, port: unknown, database: unknown): string {
  return `${typeof host === 'string' ? host : 'localhost'}${port === undefined ? '' : `:${String(port)}`}${database === undefined ? '' : `/${String(database)}`}`;
}
