import { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { HazelcastBackend } from '../backends/hazelcast/hazelcast-backend';
import { HazelcastPermitStore } from './hazelcast-permit.store';
import { HazelcastTaskStore } from '../backends/hazelcast/tasks/hazelcast-task.store';
import type { CliConnectionOptions, ReachedStore } from './cli-reached-store';

const nothing = (): void => undefined;
/** The client's logger in the CLI: every line dropped. */
const SILENT = { log: nothing, error: nothing, warn: nothing, info: nothing, debug: nothing, trace: nothing };

/** The CLI's stores on a Hazelcast cluster (hazelcast-client is loaded when they connect). */
export function hazelcastStores(options: CliConnectionOptions): ReachedStore {
  const connection = new HazelcastConnection({
    clientConfig: {
      clusterName: options.clusterName,
      network: { clusterMembers: options.members },
      connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: options.connectTimeout } },
      // Says nothing (the CLI reports a failed connection itself), but is heard: a member that refused the client.
      customLogger: SILENT,
    },
  });
  return {
    store: new HazelcastPermitStore({ mapPrefix: options.mapPrefix, connection }),
    // One backend for the stores written over the contract; each store opens and closes it.
    backend: new HazelcastBackend({ connection, mapPrefix: options.mapPrefix, callTimeoutMs: options.connectTimeout }),
    connection,
    tasks: () => new HazelcastTaskStore({ connection, mapPrefix: options.mapPrefix, callTimeoutMs: options.connectTimeout }),
    unreachable: `cannot reach Hazelcast cluster "${options.clusterName}" at ${options.members.join(', ')}`,
    hint: 'is a member running there, with that cluster name? Point the CLI at yours with --members host:port,... and --cluster-name ' +
      '(or GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME)',
  };
}
