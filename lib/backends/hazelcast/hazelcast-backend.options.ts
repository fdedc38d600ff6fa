import type { Client, ClientConfig } from 'hazelcast-client';
import type { Clock } from '../../core/clock';
import type { HazelcastConnection } from './hazelcast-connection';

/** How a {@link HazelcastBackend} reaches the cluster and names its maps. */
export interface HazelcastBackendOptions {
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
   * than passes, so it is settled by re-reading) and `hazelcast.client.heartbeat.timeout: 15000` (a member connection
   * silent that long is closed and made anew, and the change feeds re-read then: the client's default is 60 s; give a
   * client you inject the same). `connectionStrategy.asyncStart` is always `true`: the
   * connection waits for the first connection itself, bounded by `connectTimeoutMs`.
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
  /** Prefix of every IMap: `<prefix>.<map>`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a call given none, in ms. Default 10 s. */
  callTimeoutMs?: number;
  /** Where the canaries and counters read time. Default the system clock. */
  clock?: Clock;
  /**
   * A connection shared with the rest of this process (the module passes its own). Default: one of this backend's
   * own, made from the connection options.
   * @internal The module passes its own; not an application option.
   */
  connection?: HazelcastConnection;
}
