import { Logger } from '@nestjs/common';
import type { ClientConfig } from 'hazelcast-client';
import { HazelcastPermitStore, type HazelcastStoreOptions } from '../permits/hazelcast-permit.store';
import { MemoryPermitStore } from '../permits/memory-permit.store';
import type { PermitStore } from '../permits/permit-store';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { HazelcastLoggerBridge } from './hazelcast-logger.bridge';

/** Environment variables the module reads for what `hazelcast.clientConfig` leaves out (as the CLI and scripts do). */
export const HAZELCAST_ENV = {
  members: 'GATEKEEPER_HZ_MEMBERS',
  clusterName: 'GATEKEEPER_HZ_CLUSTER_NAME',
} as const;

/** Builds the store the options ask for. */
export function createPermitStore(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv = process.env): PermitStore {
  if (typeof options.store === 'object') return options.store;
  if (options.store === 'memory') return new MemoryPermitStore();
  const holder: { store?: HazelcastPermitStore } = {};
  let everConnected = false;
  // The first connection is reported by the gatekeeper itself (what it waits for, and for how long).
  const quiet = () => !(everConnected ||= holder.store?.isConnected() ?? false);
  holder.store = new HazelcastPermitStore(hazelcastStoreOptions(options, env, quiet));
  return holder.store;
}

/**
 * The Hazelcast store options of the module: `hazelcast.client` as given; otherwise `hazelcast.clientConfig` with
 * the cluster name and member addresses taken, where it leaves them out, from `GATEKEEPER_HZ_CLUSTER_NAME` and
 * `GATEKEEPER_HZ_MEMBERS` (comma-separated), the client's log lines sent through Nest's `Logger` unless it sets its
 * own `customLogger`, and the module's connect timeout (none when connecting in the background).
 */
export function hazelcastStoreOptions(
  options: ResolvedGatekeeperOptions,
  env: NodeJS.ProcessEnv,
  quiet: () => boolean = () => false,
): HazelcastStoreOptions {
  const given = options.hazelcast;
  if (given.client) return given;
  const config: ClientConfig = { ...given.clientConfig };
  const members = (env[HAZELCAST_ENV.members] ?? '').split(',').map((m) => m.trim()).filter(Boolean);
  if (config.clusterName === undefined && env[HAZELCAST_ENV.clusterName]) config.clusterName = env[HAZELCAST_ENV.clusterName];
  if (config.network?.clusterMembers === undefined && members.length > 0) {
    config.network = { ...config.network, clusterMembers: members };
  }
  if (!config.customLogger) {
    config.customLogger = new HazelcastLoggerBridge(new Logger('Hazelcast'), config.properties?.['hazelcast.logging.level'], quiet);
  }
  return {
    ...given,
    clientConfig: config,
    connectTimeoutMs: options.connectInBackground ? Infinity : options.connectTimeoutMs,
  };
}
