import { HazelcastPermitStore } from '../store/hazelcast-permit.store';
import { StoreUnavailableError } from '../errors/store-unavailable.error';
import { systemClock } from '../gatekeeper/clock';

/** How the CLI reaches the cluster (flags, else environment, else a local default). */
export interface CliConnectionOptions {
  members: string;
  clusterName: string;
  mapPrefix: string;
  connectTimeout: number;
}

/** Connects a store the way the CLI needs: quiet, and giving up after `connectTimeout` ms. */
export async function connectCliStore(options: CliConnectionOptions): Promise<HazelcastPermitStore> {
  const members = options.members.split(',').map((m) => m.trim()).filter(Boolean);
  const store = new HazelcastPermitStore({
    mapPrefix: options.mapPrefix,
    clientConfig: {
      clusterName: options.clusterName,
      network: { clusterMembers: members },
      connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: options.connectTimeout } },
      properties: { 'hazelcast.logging.level': 'OFF' },
    },
  });
  try {
    await store.connect({ clock: systemClock });
  } catch (error) {
    throw new StoreUnavailableError(
      `cannot reach Hazelcast cluster "${options.clusterName}" at ${members.join(', ')} within ${options.connectTimeout} ms ` +
        `(${(error as Error).message}); set --members/--cluster-name or GATEKEEPER_HZ_MEMBERS/GATEKEEPER_HZ_CLUSTER_NAME`,
      { cause: error },
    );
  }
  return store;
}
