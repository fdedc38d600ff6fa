import type { Client } from 'hazelcast-client';

/** The client's connection manager, as far as this uses it: it emits each member connection it adds. */
interface ConnectionEvents {
  on(event: 'connectionAdded', listener: (connection: MemberConnection) => void): unknown;
}

interface MemberConnection {
  isAlive(): boolean;
}

/** The client's listener service, as far as this uses it: each listener's registrations, by connection. */
interface ListenerRegistrations {
  registrations: Map<string, { connectionRegistrations: Map<MemberConnection, unknown> }>;
}

/** How often a listener's registration on a new connection is looked for, and for how long at most. */
const REGISTERED_POLL_MS = 20;
const REGISTERED_WAIT_MS = 30_000;

/**
 * Tells an entry listener that events may have been lost on a path the client does not report (HAZELCAST.md): when
 * only the connection to one member is reset, the client reconnects to it and registers its listeners there again,
 * with no lifecycle event and no member leaving, and what that member sent meanwhile never arrives. The client's
 * connection manager emits each connection it adds; once every one of a watch's listeners is registered on the new
 * connection, everything that member sends from then on reaches them, so a re-read from then on misses nothing.
 *
 * Internal to the client (5.6/5.7), so looked up, not assumed: {@link MemberReconnections.of} answers `undefined`
 * for a client without them, and its maps' views then re-read on a timer (`resyncEveryMs`), as before.
 */
export class MemberReconnections {
  private static readonly ofClient = new WeakMap<object, MemberReconnections>();
  /** What to do with each connection added: one listener on the client, however many watches. */
  private readonly watchers = new Set<(connection: MemberConnection) => void>();

  private constructor(
    connections: ConnectionEvents,
    private readonly listeners: ListenerRegistrations,
  ) {
    connections.on('connectionAdded', (connection) => {
      for (const watcher of [...this.watchers]) watcher(connection);
    });
  }

  /** The reconnections of `client`'s member connections (one per client), or `undefined` when it does not expose them. */
  static of(client: Client): MemberReconnections | undefined {
    const known = MemberReconnections.ofClient.get(client);
    if (known) return known;
    const internal = client as unknown as { getConnectionManager?: () => unknown; getListenerService?: () => unknown };
    const connections = internal.getConnectionManager?.() as Partial<ConnectionEvents> | undefined;
    const listeners = internal.getListenerService?.() as Partial<ListenerRegistrations> | undefined;
    if (typeof connections?.on !== 'function') return undefined;
    if (!(listeners?.registrations instanceof Map)) return undefined;
    const made = new MemberReconnections(connections as ConnectionEvents, listeners as ListenerRegistrations);
    MemberReconnections.ofClient.set(client, made);
    return made;
  }

  /**
   * Calls `heard` after each member connection the client adds, once every listener of `ids()` (their registration
   * ids, read at each check; `undefined` while they are being added) is registered on it: from then on that member's
   * events reach them. A listener the
   * client dropped (its registration failed) counts as settled: `heard` is called and the watch decides what to do.
   * Returns what stops it.
   */
  watch(ids: () => readonly string[] | undefined, heard: () => void): () => void {
    const timers = new Set<NodeJS.Timeout>();
    let stopped = false;
    const added = (connection: MemberConnection) => {
      const until = Date.now() + REGISTERED_WAIT_MS;
      const check = () => {
        if (stopped) return;
        // Listeners still being added (`undefined`) are waited for too: a connection added meanwhile may get them late.
        const current = ids();
        const waiting = current === undefined || current.some((id) => this.listeners.registrations.get(id)?.connectionRegistrations.has(connection) === false);
        if (waiting && connection.isAlive() && Date.now() < until) {
          const timer = setTimeout(() => {
            timers.delete(timer);
            check();
          }, REGISTERED_POLL_MS);
          timer.unref();
          timers.add(timer);
          return;
        }
        heard();
      };
      check();
    };
    this.watchers.add(added);
    return () => {
      stopped = true;
      this.watchers.delete(added);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    };
  }

  /** Whether the client still holds `id` as a listener (it drops one whose registration on a live connection failed). */
  listening(id: string): boolean {
    return this.listeners.registrations.has(id);
  }
}
