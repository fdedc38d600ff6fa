import { Logger } from '@nestjs/common';
import type { ClientConfig } from 'hazelcast-client';
import { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { HazelcastBackend } from '../backends/hazelcast/hazelcast-backend';
import { MemoryBackend } from '../backends/memory/memory-backend';
import { MemoryRecords } from '../backends/memory/memory-records';
import { PresenceRecordStore } from '../presence/presence-record.store';
import type { StoreBackend } from '../store/store-backend';
import type { PresenceStore } from '../presence/presence-store';
import { HazelcastPermitStore, type HazelcastStoreOptions } from '../backends/hazelcast/permits/hazelcast-permit.store';
import { MemoryPermitStore } from '../backends/memory/permits/memory-permit.store';
import type { PermitStore } from '../permits/permit-store';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { HazelcastLoggerBridge } from './hazelcast-logger.bridge';
import { HazelcastTaskStore } from '../backends/hazelcast/tasks/hazelcast-task.store';
import { MemoryTaskStore } from '../tasks/memory-task.store';
import type { TaskStore } from '../tasks/task-store';
import { HistoryRecordStore } from '../schedules/history-record.store';
import type { HistoryStore } from '../schedules/history-store';
import { RunRequestRecordStore } from '../schedules/run-request-record.store';
import type { RunRequestStore } from '../schedules/run-request-store';
import { ScheduleRecordStore } from '../schedules/schedule-record.store';
import type { ScheduleStore } from '../schedules/schedule-store';

/** Environment variables the module reads for what `hazelcast.clientConfig` leaves out (as the CLI and scripts do). */
export const HAZELCAST_ENV = {
  members: 'GATEKEEPER_HZ_MEMBERS',
  clusterName: 'GATEKEEPER_HZ_CLUSTER_NAME',
} as const;

/**
 * Where the module's cluster name and member addresses come from (its options, the environment, or Hazelcast's
 * defaults), as start-up errors name them.
 */
export function hazelcastTargetSources(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv = process.env): string {
  const config = options.hazelcast.clientConfig;
  const members = config?.network?.clusterMembers !== undefined
    ? 'members from hazelcast.clientConfig'
    : env[HAZELCAST_ENV.members]?.trim() ? `members from ${HAZELCAST_ENV.members}` : `default members: ${HAZELCAST_ENV.members} is not set`;
  const name = config?.clusterName !== undefined
    ? 'cluster name from hazelcast.clientConfig'
    : env[HAZELCAST_ENV.clusterName] ? `cluster name from ${HAZELCAST_ENV.clusterName}` : `default cluster name: ${HAZELCAST_ENV.clusterName} is not set`;
  return `${members}; ${name}`;
}

/** The process's Hazelcast connection, shared by every capability's store; `undefined` without a Hazelcast store. */
export function createConnection(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv = process.env): HazelcastConnection | undefined {
  if (options.store !== 'hazelcast') return undefined;
  const holder: { connection?: HazelcastConnection } = {};
  let everConnected = false;
  // The first connection is reported by the gatekeeper itself (what it waits for, and for how long).
  const quiet = () => !(everConnected ||= holder.connection?.client !== undefined);
  holder.connection = new HazelcastConnection(hazelcastStoreOptions(options, env, quiet));
  return holder.connection;
}

/**
 * The process's store backend, which the capabilities written over the store contract share: Hazelcast on the shared
 * connection, else one in this process's memory.
 */
export function createBackend(options: ResolvedGatekeeperOptions, connection?: HazelcastConnection): StoreBackend {
  if (connection) return new HazelcastBackend({ connection, mapPrefix: options.hazelcast.mapPrefix, callTimeoutMs: options.hazelcast.callTimeoutMs, clock: options.clock });
  return new MemoryBackend(new MemoryRecords(options.clock));
}

/** Builds the permit store the options ask for, on the shared connection when it is Hazelcast's. */
export function createPermitStore(options: ResolvedGatekeeperOptions, connection?: HazelcastConnection): PermitStore {
  if (typeof options.store === 'object') return options.store;
  if (options.store === 'memory' || !connection) return new MemoryPermitStore();
  return new HazelcastPermitStore({ ...options.hazelcast, connection });
}

/** Builds the presence store: the one given, else on the process's backend; none with membership off. */
export function createPresenceStore(options: ResolvedGatekeeperOptions, backend: StoreBackend): PresenceStore | undefined {
  if (!options.membership) return undefined;
  return options.membership.store ?? new PresenceRecordStore(backend);
}

/** Builds the task store: the one given in `tasks.store`, else on the shared connection, else in memory. */
export function createTaskStore(options: ResolvedGatekeeperOptions, connection?: HazelcastConnection): TaskStore {
  if (options.tasks.store) return options.tasks.store;
  if (connection) return new HazelcastTaskStore({ connection, mapPrefix: options.hazelcast.mapPrefix, callTimeoutMs: options.hazelcast.callTimeoutMs });
  return new MemoryTaskStore();
}

/** Builds the run history store: the one given in `schedules.historyStore`, else on the process's backend. */
export function createHistoryStore(options: ResolvedGatekeeperOptions, backend: StoreBackend): HistoryStore {
  return options.schedules.historyStore ?? new HistoryRecordStore(backend);
}

/** Builds the store of runtime schedules: the one given in `schedules.store`, else on the process's backend. */
export function createScheduleStore(options: ResolvedGatekeeperOptions, backend: StoreBackend): ScheduleStore {
  return options.schedules.store ?? new ScheduleRecordStore(backend);
}

/** Builds the store of "run now" requests, on the process's backend. */
export function createRunRequestStore(backend: StoreBackend): RunRequestStore {
  return new RunRequestRecordStore(backend);
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
  // Hazelcast Cloud discovery finds the members itself: the client refuses member addresses next to it.
  if (config.network?.clusterMembers === undefined && members.length > 0 && !config.network?.hazelcastCloud?.discoveryToken) {
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
