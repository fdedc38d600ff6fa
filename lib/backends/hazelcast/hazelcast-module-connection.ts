import { formatDuration } from '../../core/duration';
import { ENV } from '../../core/env-vars';
import { ClusterNameRefusedError } from './errors/cluster-name-refused.error';
import type { ClientConfig } from './hazelcast-client.types';
import { HazelcastConnection } from './hazelcast-connection';
import { HazelcastLoggerBridge, type LevelledLogger } from './hazelcast-logger.bridge';
import type { HazelcastConnectionOptions } from './hazelcast-connection.options';

/** Environment variables the module reads for what `hazelcast.clientConfig` leaves out (as the CLI and scripts do). */
const HAZELCAST_ENV = { members: ENV.hzMembers, clusterName: ENV.hzClusterName } as const;

/** How long the module waits for the cluster at start-up: `connectTimeoutMs`, or no limit when it does not wait. */
export interface ModuleConnectTiming {
  readonly connectTimeoutMs: number;
  /** Start-up does not wait (permits are denied until connected): the first connection has no limit. */
  readonly connectInBackground: boolean;
}

/**
 * Where the module's cluster name and member addresses come from (its `hazelcast` option, the environment, or
 * Hazelcast's defaults), as start-up errors name them.
 */
export function hazelcastTargetSources(given: HazelcastConnectionOptions, env: NodeJS.ProcessEnv = process.env): string {
  const config = given.clientConfig;
  const members = config?.network?.clusterMembers !== undefined
    ? 'members from hazelcast.clientConfig'
    : env[HAZELCAST_ENV.members]?.trim() ? `members from ${HAZELCAST_ENV.members}` : `default members: ${HAZELCAST_ENV.members} is not set`;
  const name = config?.clusterName !== undefined
    ? 'cluster name from hazelcast.clientConfig'
    : env[HAZELCAST_ENV.clusterName] ? `cluster name from ${HAZELCAST_ENV.clusterName}` : `default cluster name: ${HAZELCAST_ENV.clusterName} is not set`;
  return `${members}; ${name}`;
}

/**
 * The module's Hazelcast store options: `given.client` as given; otherwise `given.clientConfig` with the cluster name
 * and member addresses taken, where it leaves them out, from `GATEKEEPER_HZ_CLUSTER_NAME` and `GATEKEEPER_HZ_MEMBERS`
 * (comma-separated), the client's log lines sent to `logger` (see {@link HazelcastLoggerBridge}) unless it sets its
 * own `customLogger`, and the module's connect timeout (none when connecting in the background).
 */
export function hazelcastStoreOptions<O extends HazelcastConnectionOptions>(
  given: O,
  timing: ModuleConnectTiming,
  env: NodeJS.ProcessEnv,
  logger: LevelledLogger,
  quiet: () => boolean = () => false,
): O & Pick<HazelcastConnectionOptions, 'connectTimeoutMs'> {
  if (given.client) return given;
  const config: ClientConfig = { ...given.clientConfig };
  const members = (env[HAZELCAST_ENV.members] ?? '').split(',').map((m) => m.trim()).filter(Boolean);
  if (config.clusterName === undefined && env[HAZELCAST_ENV.clusterName]) config.clusterName = env[HAZELCAST_ENV.clusterName];
  // Hazelcast Cloud discovery finds the members itself: the client refuses member addresses next to it.
  if (config.network?.clusterMembers === undefined && members.length > 0 && !config.network?.hazelcastCloud?.discoveryToken) {
    config.network = { ...config.network, clusterMembers: members };
  }
  if (!config.customLogger) config.customLogger = new HazelcastLoggerBridge(logger, config.properties?.['hazelcast.logging.level'], quiet);
  return { ...given, clientConfig: config, connectTimeoutMs: timing.connectInBackground ? Infinity : timing.connectTimeoutMs };
}

/**
 * The process's Hazelcast connection, shared by every capability on `'hazelcast'`, made from the module's options
 * (see {@link hazelcastStoreOptions}). The first connection is reported by the gatekeeper itself (what it waits for,
 * and for how long), and so is an outage (one line when the cluster goes, one when it is back): the client's own
 * warnings meanwhile (each attempt to reconnect, each call refused) come out at debug.
 */
export function moduleConnection(given: HazelcastConnectionOptions, timing: ModuleConnectTiming, env: NodeJS.ProcessEnv, logger: LevelledLogger): HazelcastConnection {
  const holder: { connection?: HazelcastConnection } = {};
  let everConnected = false;
  let offline = false;
  const quiet = () => offline || !(everConnected ||= holder.connection?.client !== undefined);
  holder.connection = new HazelcastConnection(hazelcastStoreOptions(given, timing, env, logger, quiet));
  holder.connection.onState((state) => {
    offline = state === 'disconnected';
  });
  return holder.connection;
}

/**
 * The one line start-up fails with when the module's first connection to the cluster (`target`, tried for
 * `timeoutMs`) failed: a cluster name the members refused, or no member reached, with where the name and addresses
 * came from and the ways forward.
 */
export function moduleConnectFailure(
  error: unknown,
  given: HazelcastConnectionOptions,
  target: { clusterName: string; members: string[] },
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const sources = hazelcastTargetSources(given, env);
  if (error instanceof ClusterNameRefusedError) {
    return `${error.message}. Set GATEKEEPER_HZ_CLUSTER_NAME, or hazelcast.clientConfig.clusterName, to the name the members were started with (${sources})`;
  }
  return clusterUnreachable({ ...target, sources }, timeoutMs);
}

/** No member of the cluster answered within `timeoutMs`: what was tried, where it came from, the commands for a local one. */
export function clusterUnreachable(target: { clusterName: string; members: string[]; sources: string }, timeoutMs: number): string {
  const [host, port = '5701'] = (target.members[0] ?? '127.0.0.1:5701').split(':');
  const local = ['127.0.0.1', 'localhost', '0.0.0.0'].includes(host);
  const named = target.clusterName === 'dev' ? '' : ` --cluster-name ${target.clusterName}`;
  const start = local
    ? `npx nestjs-gatekeeper${named} hazelcast start${port === '5701' ? '' : ` --port ${port}`}, or ` +
      `docker run --rm -p ${port}:5701${named ? ` -e HZ_CLUSTERNAME=${target.clusterName}` : ''} hazelcast/hazelcast:5.6.0`
    : 'npx nestjs-gatekeeper hazelcast start, or docker run --rm -p 5701:5701 hazelcast/hazelcast:5.6.0, for a local one';
  return `Cannot reach Hazelcast cluster "${target.clusterName}" at ${target.members.join(', ')} within ${formatDuration(timeoutMs)} ` +
    `(${target.sources}). Start a member (${start}), or point GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME at yours; ` +
    "for a single instance, use backend: 'memory'; to boot now and deny every permit until connected, set connectInBackground: true";
}
