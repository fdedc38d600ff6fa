import type { Client, ClientConfig, LifecycleState } from 'hazelcast-client';
import { refusalTap } from './refusal-tap';

/** The longest wait between connection attempts, unless the client config sets its own `maxBackoffMillis`. */
const MAX_BACKOFF_MS = 5_000;
/**
 * How long a member connection may stay silent before the client closes it and connects again, unless the client
 * config sets `hazelcast.client.heartbeat.timeout` (the client's own default is 60 s). A connection that goes silent
 * with no reset (a route dropped, a firewall discarding) loses that member's events until it is closed; once it is
 * made anew the feed says so (`MemberReconnections`). The client pings a quiet connection every 5 s: three pings.
 */
const HEARTBEAT_TIMEOUT_MS = 15_000;

/**
 * What a Hazelcast connection is made from: the connection fields of `HazelcastBackendOptions` (documented there),
 * named here so the connection does not import the backend's options (which name the connection).
 */
export interface HazelcastConnectionOptions {
  client?: Client;
  clientConfig?: ClientConfig;
  connectTimeoutMs?: number;
}

/**
 * The config of a client a connection owns: the application's `clientConfig` over the connection's defaults (see
 * `HazelcastBackendOptions.clientConfig`), with `onLifecycle` added to its lifecycle listeners.
 */
export function ownedClientConfig(options: HazelcastConnectionOptions, onLifecycle: (state: LifecycleState) => void, onRefused?: (address: string) => void): ClientConfig {
  const config = options.clientConfig ?? {};
  const retry = config.connectionStrategy?.connectionRetry;
  return {
    ...config,
    properties: { 'hazelcast.client.operation.fail.on.indeterminate.state': true, 'hazelcast.client.heartbeat.timeout': HEARTBEAT_TIMEOUT_MS, ...config.properties },
    connectionStrategy: {
      ...config.connectionStrategy,
      // The first connection is waited for (and bounded) by the connection, not inside newHazelcastClient.
      asyncStart: true,
      reconnectMode: config.connectionStrategy?.reconnectMode ?? 'ASYNC',
      // The client's default backoff grows to 30 s: a node waiting for a cluster that just came up would idle that long.
      connectionRetry: { ...retry, maxBackoffMillis: retry?.maxBackoffMillis ?? MAX_BACKOFF_MS },
    },
    lifecycleListeners: [...(config.lifecycleListeners ?? []), onLifecycle],
    // A member that refused the client is heard in its log lines only: with a logger given, they are listened to.
    ...(config.customLogger && onRefused && { customLogger: refusalTap(config.customLogger, onRefused) }),
  } as ClientConfig;
}

/** The bound on the first connection: `connectTimeoutMs`, else the client config's own; `undefined` for none. */
export function firstConnectionBound(options: HazelcastConnectionOptions): number | undefined {
  const own = options.clientConfig?.connectionStrategy?.connectionRetry?.clusterConnectTimeoutMillis;
  const bound = options.connectTimeoutMs ?? (own !== undefined && own >= 0 ? own : undefined);
  return bound === Infinity ? undefined : bound;
}

/** The cluster a client config is for (name and member addresses), for logs and errors. */
export function clusterTarget(config: ClientConfig = {}): { clusterName: string; members: string[] } {
  // A Hazelcast Cloud cluster is found through its discovery token, not addresses: say so rather than the default.
  const cloud = config.network?.hazelcastCloud?.discoveryToken ? ['Hazelcast Cloud (network.hazelcastCloud.discoveryToken)'] : undefined;
  return { clusterName: config.clusterName ?? 'dev', members: config.network?.clusterMembers ?? cloud ?? ['127.0.0.1:5701'] };
}

/** Why a first connection failed, with the ways forward (`detail` says how it ended). */
export function unreachableMessage(target: { clusterName: string; members: string[] }, detail: string): string {
  return `Cannot reach Hazelcast cluster "${target.clusterName}" at ${target.members.join(', ')} ${detail}: is a member running there, ` +
    'with this cluster name? Set GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME, or hazelcast.clientConfig';
}
