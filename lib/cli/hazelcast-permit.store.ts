import type { Client, ClientConfig } from '../backends/hazelcast/hazelcast-client.types';
import { HazelcastBackend } from '../backends/hazelcast/hazelcast-backend';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { PermitRecordStore } from '../permits/permit-record.store';

/** How the Hazelcast store reaches the cluster. */
export interface HazelcastStoreOptions {
  /**
   * A client the application already has. The store uses it but never shuts it down. Lifecycle events can only be
   * registered in a client's config, so with an injected client a lost connection is noticed on the next failed
   * call (and the view's age bound covers events missed meanwhile).
   */
  client?: Client;
  /**
   * Config for a client the store creates and owns (shut down on close). Merged over the store's defaults:
   * `connectionStrategy.reconnectMode: 'ASYNC'`, so calls fail fast while disconnected instead of blocking.
   */
  clientConfig?: ClientConfig;
  /** Prefix of the IMap: `<prefix>.semaphores`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a store call that serves no particular permit (edits, listings). Default 10 s. */
  callTimeoutMs?: number;
  /** How long the first connection may take: see `HazelcastConnectionOptions.connectTimeoutMs`. */
  connectTimeoutMs?: number;
  /**
   * A connection shared with the other capabilities of this process (the module passes its own); `client`,
   * `clientConfig` and `connectTimeoutMs` are then the connection's business. Default: a connection of this
   * store's own, made from them.
   * @internal The module passes its own; not an application option.
   */
  connection?: HazelcastConnection;
}

/**
 * The permit store on a Hazelcast cluster: the permit store of the store contract ({@link PermitRecordStore}) on a
 * Hazelcast backend of its own (IMap `<prefix>.semaphores`, entry listeners that leave out this node's own values,
 * partition canaries for lost entries), made from Hazelcast options: what the CLI opens on a cluster. It lives with
 * the CLI rather than the backend, which imports no capability.
 */
export class HazelcastPermitStore extends PermitRecordStore {
  private readonly hazelcast: HazelcastBackend;

  constructor(options: HazelcastStoreOptions = {}) {
    const backend = new HazelcastBackend(options);
    super(backend, options.callTimeoutMs ?? 10_000);
    this.hazelcast = backend;
  }

  /** The cluster an owned client is configured for (name and member addresses), for logs and errors. */
  target(): { clusterName: string; members: string[] } {
    return this.hazelcast.connection.target();
  }
}
