import { setTimeout as sleep } from 'node:timers/promises';
import { Client, LifecycleState, SplitBrainProtectionError, type ClientConfig, type InitialMembershipListener } from 'hazelcast-client';
import { formatDuration } from '../core/duration';
import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { withDeadline } from '../core/with-deadline';

/** The longest wait between connection attempts, unless the client config sets its own `maxBackoffMillis`. */
const MAX_BACKOFF_MS = 5_000;
/** Before a background start replaces a client that gave up by its own `clusterConnectTimeoutMillis`. */
const RESTART_PAUSE_MS = 1_000;

/** How a {@link HazelcastConnection} reaches the cluster. */
export interface HazelcastConnectionOptions {
  /**
   * A client the application already has: used, never shut down. Lifecycle events can only be registered in a
   * client's config, so with an injected client a lost connection is noticed by its users on their next failed call.
   */
  client?: Client;
  /**
   * Config of a client the connection creates and owns (shut down when its last user closes it). Merged over
   * `connectionStrategy.reconnectMode: 'ASYNC'` (calls fail fast while disconnected),
   * `connectionStrategy.connectionRetry.maxBackoffMillis: 5000` (a cluster that comes up is noticed within 5 s) and
   * `hazelcast.client.operation.fail.on.indeterminate.state` (a write whose backups did not confirm fails rather
   * than passes, so it is settled by re-reading). `connectionStrategy.asyncStart` is always `true`: the
   * connection waits for the first connection itself, bounded by {@link connectTimeoutMs}.
   */
  clientConfig?: ClientConfig;
  /**
   * How long opening waits for the cluster before it gives up with a {@link StoreUnavailableError} naming the
   * cluster and its members; `Infinity` keeps trying until connected or closed. Default: `clientConfig`'s
   * `connectionStrategy.connectionRetry.clusterConnectTimeoutMillis`, else no limit. Only the first connection is
   * bounded: once connected, the client keeps trying to reconnect for as long as it takes (unless
   * `clusterConnectTimeoutMillis` is set, after which it shuts down).
   */
  connectTimeoutMs?: number;
}

/** Lifecycle states of an owned client, as its users see them. */
export type ConnectionState = 'connected' | 'disconnected';

/** One call a store made to the cluster, as it ended (for metrics). */
export interface StoreCall {
  /** The store that made it. */
  readonly store: 'permits' | 'presence' | 'tasks';
  readonly durationMs: number;
  /** `timeout`: no answer within its deadline (its outcome is unknown); `error`: it failed. */
  readonly outcome: 'ok' | 'error' | 'timeout';
}

/**
 * The one Hazelcast client a process's capabilities share: opened once by whichever uses it first, closed when the
 * last of them closes it (an owned client is then shut down; an injected one is left alone). Its users hear of the
 * owned client's disconnects and reconnects through {@link onState}.
 */
export class HazelcastConnection {
  private opening?: Promise<Client>;
  private current?: Client;
  private users = 0;
  private closed = false;
  /** Grows at every final close, so a start begun before it gives up even if the connection is opened again. */
  private generation = 0;
  /** The owned client while it waits for its first connection. */
  private starting?: { client: Client; first: FirstConnection };
  private readonly listeners = new Set<(state: ConnectionState) => void>();
  private readonly callListeners = new Set<(call: StoreCall) => void>();

  constructor(private readonly options: HazelcastConnectionOptions = {}) {}

  /** Whether this connection created the client (and so shuts it down, and reports its lifecycle). */
  get owned(): boolean {
    return !this.options.client;
  }

  /** The client, once opened. */
  get client(): Client | undefined {
    return this.current;
  }

  /** Opens (or joins) the connection; every call must be matched by one {@link close}. */
  async open(): Promise<Client> {
    this.users++;
    this.closed = false;
    const generation = this.generation;
    this.opening ??= (this.options.client ? Promise.resolve(this.options.client) : this.startOwnedClient(generation)).then((client) => {
      this.current = client;
      return client;
    });
    try {
      return await this.opening;
    } catch (error) {
      // A close() while opening has already counted this user out.
      if (!this.closed) this.users = Math.max(0, this.users - 1);
      this.opening = undefined;
      throw error;
    }
  }

  /** Leaves the connection; the last user's close shuts an owned client down. */
  async close(): Promise<void> {
    this.users = Math.max(0, this.users - 1);
    if (this.users > 0) return;
    this.closed = true;
    this.generation++;
    const client = this.current;
    this.current = undefined;
    this.opening = undefined;
    // A start still waiting for its first connection stops now (and shuts its client down itself).
    this.starting?.first.abandon();
    if (client && this.owned) await client.shutdown().catch(() => undefined);
  }

  /** Hears the owned client go offline and come back; returns the unsubscribe. */
  onState(listener: (state: ConnectionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hears every call the stores on this connection make, as it ends; returns the unsubscribe. */
  onCall(listener: (call: StoreCall) => void): () => void {
    this.callListeners.add(listener);
    return () => this.callListeners.delete(listener);
  }

  /**
   * Runs one call of `store` with its deadline (see `withDeadline`), and tells the {@link onCall} listeners how long
   * it took and how it ended.
   */
  async timed<T>(store: StoreCall['store'], operation: () => Promise<T>, timeoutMs: number | undefined, what: string): Promise<T> {
    if (this.callListeners.size === 0) return withDeadline(operation(), timeoutMs, what).catch(quorumLost(what));
    const started = performance.now();
    let outcome: StoreCall['outcome'] = 'ok';
    try {
      return await withDeadline(operation(), timeoutMs, what).catch(quorumLost(what));
    } catch (error) {
      outcome = error instanceof StoreTimeoutError ? 'timeout' : 'error';
      throw error;
    } finally {
      const call: StoreCall = { store, durationMs: performance.now() - started, outcome };
      for (const listener of this.callListeners) listener(call);
    }
  }

  /** Whether the client runs (it may still be reconnecting). */
  isRunning(): boolean {
    return this.current?.getLifecycleService().isRunning() ?? false;
  }

  /** The cluster an owned client is configured for (name and member addresses), for logs and errors. */
  target(): { clusterName: string; members: string[] } {
    const config = this.options.clientConfig ?? {};
    // A Hazelcast Cloud cluster is found through its discovery token, not addresses: say so rather than the default.
    const cloud = config.network?.hazelcastCloud?.discoveryToken ? ['Hazelcast Cloud (network.hazelcastCloud.discoveryToken)'] : undefined;
    return { clusterName: config.clusterName ?? 'dev', members: config.network?.clusterMembers ?? cloud ?? ['127.0.0.1:5701'] };
  }

  /**
   * Starts the client this connection owns: one client, whose first connection this bounds itself. The client
   * starts asynchronously (it would otherwise give up only at its own `clusterConnectTimeoutMillis`, which also
   * ends every later reconnect), and this waits for it to connect and learn the member list until the bound; past
   * it the client is shut down, so a failed start leaves nothing running. Once connected, it keeps retrying for as
   * long as it takes when the connection drops. With no bound (`connectTimeoutMs: Infinity`), it waits until
   * connected or closed, starting a new client if one gives up by its own config.
   */
  private async startOwnedClient(generation: number): Promise<Client> {
    const bound = this.firstConnectionBound();
    const deadline = bound === undefined ? undefined : Date.now() + bound;
    for (;;) {
      if (this.closed || this.generation !== generation) throw new StoreUnavailableError('the connection was closed while connecting');
      const first = new FirstConnection();
      const client = await Client.newHazelcastClient(this.ownedClientConfig(first)).catch((error: unknown) => {
        throw new StoreUnavailableError(this.unreachable(`(the client could not start: ${(error as Error).message})`), { cause: error });
      });
      this.starting = { client, first };
      let outcome: FirstOutcome;
      try {
        outcome = await first.wait(client, deadline === undefined ? undefined : deadline - Date.now());
      } finally {
        this.starting = undefined;
      }
      if (outcome === 'connected' && !this.closed && this.generation === generation) {
        await connectToEveryMember(client);
        return client;
      }
      await client.shutdown().catch(() => undefined);
      if (this.closed || this.generation !== generation) throw new StoreUnavailableError('the connection was closed while connecting');
      if (outcome === 'gave up' && deadline === undefined) {
        // No bound (a background start): a new client tries on, after a pause in case the client's own limit is tiny.
        await sleep(RESTART_PAUSE_MS, undefined, { ref: false });
        continue;
      }
      throw new StoreUnavailableError(this.unreachable(outcome === 'gave up'
        ? '(the client gave up: connectionRetry.clusterConnectTimeoutMillis)'
        : `within ${formatDuration(bound!)}`));
    }
  }

  /** The bound on the first connection: `connectTimeoutMs`, else the client config's own; `undefined` for none. */
  private firstConnectionBound(): number | undefined {
    const own = this.options.clientConfig?.connectionStrategy?.connectionRetry?.clusterConnectTimeoutMillis;
    const bound = this.options.connectTimeoutMs ?? (own !== undefined && own >= 0 ? own : undefined);
    return bound === Infinity ? undefined : bound;
  }

  private unreachable(detail: string): string {
    const { clusterName, members } = this.target();
    return `Cannot reach Hazelcast cluster "${clusterName}" at ${members.join(', ')} ${detail}: is a member running there, ` +
      'with this cluster name? Set GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME, or hazelcast.clientConfig';
  }

  private ownedClientConfig(first: FirstConnection): ClientConfig {
    const config = this.options.clientConfig ?? {};
    const retry = config.connectionStrategy?.connectionRetry;
    return {
      ...config,
      properties: { 'hazelcast.client.operation.fail.on.indeterminate.state': true, ...config.properties },
      connectionStrategy: {
        ...config.connectionStrategy,
        // The first connection is waited for (and bounded) here, not inside newHazelcastClient.
        asyncStart: true,
        reconnectMode: config.connectionStrategy?.reconnectMode ?? 'ASYNC',
        // The client's default backoff grows to 30 s: a node waiting for a cluster that just came up would idle that long.
        connectionRetry: { ...retry, maxBackoffMillis: retry?.maxBackoffMillis ?? MAX_BACKOFF_MS },
      },
      lifecycleListeners: [...(config.lifecycleListeners ?? []), (state: LifecycleState) => {
        first.onLifecycle(state);
        this.onLifecycle(state);
      }],
    } as ClientConfig;
  }

  private onLifecycle(state: LifecycleState): void {
    const mapped = state === LifecycleState.DISCONNECTED ? 'disconnected' : state === LifecycleState.CONNECTED ? 'connected' : undefined;
    if (!mapped) return;
    for (const listener of this.listeners) listener(mapped);
  }
}

type FirstOutcome = 'connected' | 'gave up' | 'timed out' | 'abandoned';

/**
 * The wait for an owned client's first connection: connected with the member list known (what a synchronous
 * start waits for), given up by the client itself (its own `clusterConnectTimeoutMillis`), past the bound, or
 * abandoned by a close(). The first of these wins.
 */
class FirstConnection {
  private settle!: (outcome: FirstOutcome) => void;
  private readonly outcome = new Promise<FirstOutcome>((resolve) => (this.settle = resolve));
  private connected = false;
  private client?: Client;
  private membersListener?: string;

  onLifecycle(state: LifecycleState): void {
    if (state === LifecycleState.CONNECTED) {
      this.connected = true;
      this.awaitMembers();
    } else if (state === LifecycleState.SHUTTING_DOWN || state === LifecycleState.SHUTDOWN) {
      this.settle('gave up');
    }
  }

  abandon(): void {
    this.settle('abandoned');
  }

  /** Waits for the first outcome, at most `timeoutMs` (none: no limit). */
  async wait(client: Client, timeoutMs: number | undefined): Promise<FirstOutcome> {
    this.client = client;
    this.awaitMembers();
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => this.settle('timed out'), Math.max(0, timeoutMs));
    try {
      return await this.outcome;
    } finally {
      clearTimeout(timer);
      if (this.membersListener) client.getCluster().removeMembershipListener(this.membersListener);
    }
  }

  private awaitMembers(): void {
    if (!this.connected || !this.client || this.membersListener) return;
    // An initial-membership listener hears the member list at once if it is known, else when it arrives.
    const listener: InitialMembershipListener = {
      init: () => this.settle('connected'),
      memberAdded: () => undefined,
      memberRemoved: () => undefined,
    };
    this.membersListener = this.client.getCluster().addMembershipListener(listener);
  }
}

/** Maps the members' split-brain protection refusal to {@link QuorumLostError}; rethrows anything else as it is. */
function quorumLost(what: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof SplitBrainProtectionError) {
      throw new QuorumLostError(`${what}: the members' split-brain protection is not met (${error.message})`, { cause: error });
    }
    throw error;
  };
}

/**
 * What a synchronous start does once the member list is known and an asynchronous one never does (Node client
 * 5.6/5.7): open a connection to every member and keep reconnecting to members that come and go, so each call goes
 * straight to its partition's owner (smart routing). Without it, an asyncStart client stays on its first member for
 * good, and every call to another member's partitions takes one more hop through it. Internal to the client, so
 * looked up, not assumed: a client without it keeps working through one member.
 */
async function connectToEveryMember(client: Client): Promise<void> {
  const manager = (client as unknown as { connectionManager?: { connectToAllClusterMembers?: () => Promise<void> } }).connectionManager;
  await manager?.connectToAllClusterMembers?.().catch(() => undefined);
}
