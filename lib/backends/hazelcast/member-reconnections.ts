import type { Client } from 'hazelcast-client';

/** The client's connection manager, as far as this uses it: it emits each member connection it adds. */
interface ConnectionEvents {
  on(event: 'connectionAdded', listener: (connection: MemberConnection) => void): unknown;
  getConnectionRegistry(): { getConnection(uuid: unknown): MemberConnection | undefined };
}

interface MemberConnection {
  isAlive(): boolean;
}

/** The client's listener service, as far as this uses it: each listener's registrations, by connection. */
interface ListenerRegistrations {
  registrations: Map<string, { connectionRegistrations: Map<MemberConnection, { correlationId?: unknown }> }>;
}

/** The client's invocation service, as far as this uses it: the event handlers it delivers events to. */
interface EventHandlers {
  invocationsWithEventHandlers: Map<unknown, unknown>;
}

/** How often a listener's registration on a new connection is looked for, and for how long at most. */
const REGISTERED_POLL_MS = 20;
const REGISTERED_WAIT_MS = 30_000;
/**
 * How often a watch checks, with no call, that every member has a live connection carrying each of its listeners with
 * its event handler in place; while one does not (a member the client never connected to, a registration that failed
 * or is still under way, a handler the client removed), the watch is told every time, so its view re-reads as often.
 */
const COVERAGE_CHECK_MS = 5_000;
/** The longest heartbeat timeout under which a silent connection counts as found: the module's own client's. */
const HEARTBEAT_TIMEOUT_AT_MOST_MS = 15_000;

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
    private readonly client: Client,
    private readonly connections: ConnectionEvents,
    private readonly listeners: ListenerRegistrations,
    private readonly handlers: EventHandlers,
  ) {
    connections.on('connectionAdded', (connection) => {
      for (const watcher of [...this.watchers]) watcher(connection);
    });
  }

  /**
   * Whether `client`'s feeds tell every loss through this: it exposes its member connections, routes smartly (a
   * unisocket client hears other members' events through one member, which drops them when its link to them fails,
   * untold), and closes a silent connection within 15 s (`hazelcast.client.heartbeat.timeout`: the module's own
   * client sets it; the client's default is 60 s).
   */
  static tellsEveryLoss(client: Client): boolean {
    const config = client.getConfig();
    const heartbeat = Number((config.properties as Record<string, unknown> | undefined)?.['hazelcast.client.heartbeat.timeout'] ?? 60_000);
    return MemberReconnections.of(client) !== undefined && config.network?.smartRouting !== false && heartbeat <= HEARTBEAT_TIMEOUT_AT_MOST_MS;
  }

  /** The reconnections of `client`'s member connections (one per client), or `undefined` when it does not expose them. */
  static of(client: Client): MemberReconnections | undefined {
    const known = MemberReconnections.ofClient.get(client);
    if (known) return known;
    const internal = client as unknown as { getConnectionManager?: () => unknown; getListenerService?: () => unknown; getInvocationService?: () => unknown };
    const connections = internal.getConnectionManager?.() as Partial<ConnectionEvents> | undefined;
    const listeners = internal.getListenerService?.() as Partial<ListenerRegistrations> | undefined;
    const handlers = internal.getInvocationService?.() as Partial<EventHandlers> | undefined;
    if (typeof connections?.on !== 'function' || typeof connections.getConnectionRegistry !== 'function') return undefined;
    if (!(listeners?.registrations instanceof Map) || !(handlers?.invocationsWithEventHandlers instanceof Map)) return undefined;
    const made = new MemberReconnections(client, connections as ConnectionEvents, listeners as ListenerRegistrations, handlers as EventHandlers);
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
    const coverage = setInterval(() => {
      const current = ids();
      if (!stopped && current !== undefined && !this.covered(current)) heard();
    }, COVERAGE_CHECK_MS);
    coverage.unref();
    return () => {
      stopped = true;
      this.watchers.delete(added);
      clearInterval(coverage);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    };
  }

  /** Whether every member the client knows has a live connection carrying each listener of `ids`, its handler in place. */
  covered(ids: readonly string[]): boolean {
    const registry = this.connections.getConnectionRegistry();
    return this.client.getCluster().getMembers().every((member) => {
      const connection = registry.getConnection(member.uuid);
      if (!connection?.isAlive()) return false;
      return ids.every((id) => {
        const registered = this.listeners.registrations.get(id)?.connectionRegistrations.get(connection);
        return registered !== undefined && this.handlers.invocationsWithEventHandlers.has(registered.correlationId);
      });
    });
  }

  /**
   * Whether the client still delivers the events of listener `id` on some connection. One whose registration failed on
   * a connection it took for live has its handlers removed everywhere, its registration kept: deaf for good.
   */
  listening(id: string): boolean {
    const registrations = this.listeners.registrations.get(id)?.connectionRegistrations;
    return [...(registrations?.values() ?? [])].some((registered) => this.handlers.invocationsWithEventHandlers.has(registered.correlationId));
  }
}
