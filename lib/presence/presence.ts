/** What a running app instance says about itself in the cluster's presence map. */
export interface Presence {
  /** The instance's id (unique per process and application context): the key of its entry. */
  readonly instance: string;
  /** Its name (acquirer), as patterns match and logs show it. */
  readonly acquirer: string;
  /** Its group (site, zone, environment). */
  readonly group: string;
  /** When it started (epoch ms, its own clock). */
  readonly startedAt: number;
  /** The library version it runs. */
  readonly version: string;
  /**
   * Where its HTTP server answers (`http(s)://host:port[/prefix]`): its `membership.httpAddress`, else the address
   * its app listens on, once it does. Missing for an app that does not listen (or runs an older version).
   */
  readonly httpAddress?: string;
  /**
   * Where each of its capabilities keeps its state (its module's `backend` and `backends`), so an operator's tool can
   * send each command to the right store. Missing for an older version.
   */
  readonly stores?: Readonly<Record<'permits' | 'presence' | 'schedules' | 'history' | 'tasks', {
    /** The backend's kind: `postgres`, `redis`, `hazelcast`, `memory`, or a backend of the application's own. */
    readonly kind: string;
    /** The server's address as the node reaches it, without a password (PostgreSQL, Redis). */
    readonly address?: string;
    /** The schema of the library's tables (PostgreSQL). */
    readonly schema?: string;
    /** The map prefix (every backend of the library's). */
    readonly prefix?: string;
  }>>;
  /** When it last announced itself (epoch ms, its own clock). */
  readonly refreshedAt: number;
  /** Until when the announcement holds unless renewed (epoch ms, its own clock). */
  readonly expiresAt: number;
}

/** What an instance announces about itself: all but the renewal times (the HTTP address is added once it listens). */
export type PresenceIdentity = Omit<Presence, 'refreshedAt' | 'expiresAt'>;

/** Who joined and who left between two views of the live instances. */
export interface MembershipChanges {
  /** Instances in the new view that the old one lacked. */
  readonly joined: Presence[];
  /** Instances in the old view that the new one lacks. */
  readonly left: Presence[];

}
