import { setTimeout as sleep } from 'node:timers/promises';
import { Client, LifecycleState } from './hazelcast-client.load';
import { formatDuration } from '../../core/duration';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { yieldClusterViewRetries } from './cluster-view-retry';
import { ClusterNameRefusedError } from './errors/cluster-name-refused.error';
import { connectToEveryMember } from './connect-to-every-member';
import { FirstConnection, type FirstOutcome } from './first-connection';
import { clusterTarget, firstConnectionBound, ownedClientConfig, unreachableMessage, type HazelcastConnectionOptions } from './hazelcast-connection.options';


/** Before a background start replaces a client that gave up by its own `clusterConnectTimeoutMillis`. */
const RESTART_PAUSE_MS = 1_000;

/** Lifecycle states of an owned client, as its users see them. */
export type ConnectionState = 'connected' | 'disconnected';

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
      yieldClusterViewRetries(client); // an injected client too: a starved event loop stops every capability
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

  /**
   * Gives up a first connection still being waited for (a shutdown while a background start waits for the cluster),
   * without letting go of the connection's users: their opens fail, and a later open starts again.
   */
  abandonStart(): void {
    if (!this.opening || this.current) return; // not starting, or connected already
    this.generation++;
    this.starting?.first.abandon();
  }

  /** Hears the owned client go offline and come back; returns the unsubscribe. */
  onState(listener: (state: ConnectionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the client runs (it may still be reconnecting). */
  isRunning(): boolean {
    return this.current?.getLifecycleService().isRunning() ?? false;
  }

  /** The cluster an owned client is configured for (name and member addresses), for logs and errors. */
  target(): { clusterName: string; members: string[] } {
    return clusterTarget(this.options.clientConfig);
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
    const bound = firstConnectionBound(this.options);
    const deadline = bound === undefined ? undefined : Date.now() + bound;
    for (;;) {
      if (this.closed || this.generation !== generation) throw new StoreUnavailableError('the connection was closed while connecting');
      const first = new FirstConnection();
      let refusedBy: string | undefined;
      const client = await Client.newHazelcastClient(ownedClientConfig(this.options, (state) => {
        first.onLifecycle(state);
        this.onLifecycle(state);
      }, (address) => (refusedBy = address))).catch((error: unknown) => {
        throw new StoreUnavailableError(this.unreachable(`(the client could not start: ${(error as Error).message})`), { cause: error });
      });
      yieldClusterViewRetries(client);
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
      // A member answered but refused the client: not a cluster that is missing, and no wait will change it.
      if (refusedBy !== undefined) throw new ClusterNameRefusedError(refusedBy, this.target().clusterName);
      throw new StoreUnavailableError(this.unreachable(outcome === 'gave up'
        ? '(the client gave up: connectionRetry.clusterConnectTimeoutMillis)'
        : `within ${formatDuration(bound!)}`));
    }
  }

  private unreachable(detail: string): string {
    return unreachableMessage(this.target(), detail);
  }

  private onLifecycle(state: LifecycleState): void {
    const mapped = state === LifecycleState.DISCONNECTED ? 'disconnected' : state === LifecycleState.CONNECTED ? 'connected' : undefined;
    if (!mapped) return;
    for (const listener of this.listeners) listener(mapped);
  }
}

