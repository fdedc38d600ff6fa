import { Logger } from '@nestjs/common';
import type { ClientConfig } from '../backends/hazelcast/hazelcast-client.types';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { MemoryBackend } from '../backends/memory/memory-backend';
import { PostgresBackend } from '../backends/postgres/postgres-backend';
import type { PostgresBackendOptions } from '../backends/postgres/postgres-backend.options';
import { describeLostData } from '../backends/postgres/postgres-incarnation';
import { describeRedisLostData, RedisBackend } from '../backends/redis/redis-backend';
import type { RedisBackendOptions } from '../backends/redis/redis-backend.options';
import { PresenceRecordStore } from '../presence/presence-record.store';
import type { StoreBackend } from '../store/store-backend';
import type { StoreClock } from '../store/store-clock';
import type { ConnectFailure } from '../store/connect-failure';
import { redactedUrl } from '../core/redacted-url';
import { postgresConnectFailure } from '../backends/postgres/postgres-connect-failure';
import { redisConnectFailure } from '../backends/redis/redis-connect-failure';
import type { PresenceStore } from '../presence/presence-store';
import type { HazelcastStoreOptions } from '../backends/hazelcast/permits/hazelcast-permit.store';
import { PermitRecordStore } from '../permits/permit-record.store';
import type { PermitStore } from '../permits/permit-store';
import type { ResolvedGatekeeperOptions } from './options/gatekeeper.options';
import { CAPABILITY_STATES, usesHazelcast, type BackendChoice, type CapabilityState } from './options/backend-choice.options';

import { HazelcastLoggerBridge } from '../backends/hazelcast/hazelcast-logger.bridge';
import { ENV } from '../core/env-vars';
import { GATEKEEPER_LOGGER_CONTEXT } from './gatekeeper.constants';
import { TaskRecordStore } from '../tasks/task-record.store';
import { ownTaskStore } from '../tasks/task-store-source';
import type { TaskStore } from '../tasks/task-store';
import { HistoryRecordStore } from '../schedules/history-record.store';
import type { HistoryStore } from '../schedules/history-store';
import { RunRequestRecordStore, type RunRequestStore } from '../schedules/run-request.store';
import { ScheduleRecordStore } from '../schedules/schedule-record.store';
import type { ScheduleStore } from '../schedules/schedule-store';
import { invalidOption } from '../core/errors/input.errors';

/** Environment variables the module reads for what `hazelcast.clientConfig` leaves out (as the CLI and scripts do). */
const HAZELCAST_ENV = { members: ENV.hzMembers, clusterName: ENV.hzClusterName } as const;

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

/** The PostgreSQL or Redis server the permits are on, as start-up names it. */
export interface ServerTarget {
  readonly kind: 'postgres' | 'redis';
  /** `PostgreSQL`, `Redis`. */
  readonly name: string;
  /** Its address without the password (or what was given instead of one). */
  readonly address: string;
  /** Where the address came from: the option or the environment variable. */
  readonly source: string;
  /** Tells a failed connection's kind from the driver's error. */
  readonly failure: (error: unknown) => ConnectFailure;
}

/** The server the permits' backend connects to, when it is PostgreSQL or Redis made from the options; else `undefined`. */
export function serverTarget(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv = process.env): ServerTarget | undefined {
  const choice = options.backends.permits;
  if (choice === 'postgres') {
    const pg = options.postgres;
    const [address, source] = pg.pool ? ['(the pool given)', 'postgres.pool']
      : pg.connectionString !== undefined ? [redactedUrl(pg.connectionString), 'postgres.connectionString']
        : pg.poolConfig !== undefined ? [describeHost(pg.poolConfig.host, pg.poolConfig.port, pg.poolConfig.database), 'postgres.poolConfig']
          : [redactedUrl(env[ENV.pgUrl] ?? ''), ENV.pgUrl];
    return { kind: 'postgres', name: 'PostgreSQL', address, source, failure: postgresConnectFailure };
  }
  if (choice === 'redis') {
    const redis = options.redis;
    const [address, source] = redis.client ? ['(the client given)', 'redis.client']
      : redis.url !== undefined ? [redactedUrl(redis.url), 'redis.url']
        : redis.connection !== undefined ? [describeHost(redis.connection.host, redis.connection.port, redis.connection.db), 'redis.connection']
          : [redactedUrl(env[ENV.redisUrl] ?? ''), ENV.redisUrl];
    return { kind: 'redis', name: 'Redis', address, source, failure: redisConnectFailure };
  }
  return undefined;
}

function describeHost(host: unknown, port: unknown, database: unknown): string {
  return `${typeof host === 'string' ? host : 'localhost'}${port === undefined ? '' : `:${String(port)}`}${database === undefined ? '' : `/${String(database)}`}`;
}

/**
 * The module's backends: one per capability's state, the same instance wherever the options name the same backend
 * (`'hazelcast'` is one backend on the process's one Hazelcast connection, `'memory'` one in this process's memory),
 * and that connection when a capability is on it.
 */
export interface ModuleBackends {
  /** The process's Hazelcast connection: `undefined` when no capability is on `'hazelcast'`. */
  readonly connection?: HazelcastConnection;
  /** The backend of each capability's state. */
  readonly of: Readonly<Record<CapabilityState, StoreBackend>>;
}

/**
 * Builds the backends the options ask for (nothing connects until a store opens its backend). The Hazelcast half is
 * loaded only when a capability is on Hazelcast, so `hazelcast-client` is needed only then.
 */
export async function createBackends(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv = process.env): Promise<ModuleBackends> {
  const choices = CAPABILITY_STATES.map((state) => options.backends[state]);
  const hazelcast = choices.some((c) => c === 'hazelcast' || (typeof c === 'object' && c.kind === 'hazelcast'))
    ? await loadHazelcast()
    : undefined;
  const connection = hazelcast && usesHazelcast(options.backends) ? createConnection(options, env, (o) => new hazelcast.HazelcastConnection(o)) : undefined;
  let shared: StoreBackend | undefined;
  let memory: MemoryBackend | undefined;
  let postgres: PostgresBackend | undefined;
  let redis: RedisBackend | undefined;
  // A backend given as an instance, as this module's node of it (StoreBackend.node): once per module.
  const nodes = new Map<StoreBackend, StoreBackend>();
  const pick = (choice: BackendChoice): StoreBackend => {
    if (choice === 'memory') return (memory ??= new MemoryBackend({ clock: options.clock }));
    if (choice === 'postgres') return (postgres ??= new PostgresBackend(postgresOptions(options, env)));
    if (choice === 'redis') return (redis ??= new RedisBackend(redisOptions(options, env)));
    if (choice !== 'hazelcast') return nodes.get(choice) ?? nodes.set(choice, choice.node?.() ?? choice).get(choice)!;
    return (shared ??= new hazelcast!.HazelcastBackend({
      connection, mapPrefix: options.hazelcast.mapPrefix, callTimeoutMs: options.hazelcast.callTimeoutMs, clock: options.clock,
    }));
  };
  const of = Object.fromEntries(CAPABILITY_STATES.map((state) => [state, pick(options.backends[state])])) as Record<CapabilityState, StoreBackend>;
  // Leases are timed by their store's clock where it has one (PostgreSQL, Redis): see StoreClock.
  followStoreClock(options.permitClock, of.permits);
  if (!options.taskClock.isAttached()) followStoreClock(options.taskClock, of.tasks);
  return { connection, of };
}

/**
 * The Hazelcast backend and connection classes, loaded only when a capability is on Hazelcast: `hazelcast-client` is
 * then needed only by applications that use it.
 */
async function loadHazelcast() {
  const [{ HazelcastBackend }, { HazelcastConnection }] = await Promise.all([
    import('../backends/hazelcast/hazelcast-backend'),
    import('../backends/hazelcast/hazelcast-connection'),
  ]);
  return { HazelcastBackend, HazelcastConnection };
}

/** Attaches `clock` to `backend`'s own clock, when it has one. */
function followStoreClock(clock: StoreClock, backend: StoreBackend): void {
  if (backend.now) clock.attach(() => backend.now!());
}

/**
 * The `postgres` options, with the connection string from `GATEKEEPER_PG_URL` when they name no connection, and a
 * loss of data the backend finds logged as an ERROR unless they say where it goes.
 */
function postgresOptions(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv): PostgresBackendOptions {
  const given: PostgresBackendOptions = {
    onLostData: (report) => new Logger(GATEKEEPER_LOGGER_CONTEXT).error(describeLostData(report)),
    ...options.postgres,
  };
  if (given.pool || given.connectionString !== undefined || given.poolConfig !== undefined) return given;
  const url = env[ENV.pgUrl];
  if (!url) throw invalidOption('postgres', "a capability is on 'postgres' but no connection is given: set postgres.connectionString, postgres.poolConfig or postgres.pool, or GATEKEEPER_PG_URL");
  return { ...given, connectionString: url };
}

/**
 * The `redis` options, with the URL from `GATEKEEPER_REDIS_URL` when they name no connection, and a loss of data the
 * backend finds logged as an ERROR unless they say where it goes.
 */
function redisOptions(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv): RedisBackendOptions {
  const given: RedisBackendOptions = {
    onLostData: (report) => new Logger(GATEKEEPER_LOGGER_CONTEXT).error(describeRedisLostData(report)),
    onWarning: (message) => new Logger(GATEKEEPER_LOGGER_CONTEXT).warn(message),
    onUnsafeConfig: (message) => new Logger(GATEKEEPER_LOGGER_CONTEXT).error(message),
    ...options.redis,
  };
  if (given.client || given.url !== undefined || given.connection !== undefined) return given;
  const url = env[ENV.redisUrl];
  if (!url) throw invalidOption('redis', "a capability is on 'redis' but no connection is given: set redis.url, redis.connection or redis.client, or GATEKEEPER_REDIS_URL");
  return { ...given, url };
}

/** The process's Hazelcast connection, shared by every capability on `'hazelcast'`. */
function createConnection(
  options: ResolvedGatekeeperOptions,
  env: NodeJS.ProcessEnv,
  connect: (options: HazelcastStoreOptions) => HazelcastConnection,
): HazelcastConnection {
  const holder: { connection?: HazelcastConnection } = {};
  let everConnected = false;
  let offline = false;
  // The first connection is reported by the gatekeeper itself (what it waits for, and for how long), and so is an
  // outage (one line when the cluster goes, one when it is back): the client's own warnings meanwhile (each attempt
  // to reconnect, each call refused) come out at debug.
  const quiet = () => offline || !(everConnected ||= holder.connection?.client !== undefined);
  holder.connection = connect(hazelcastStoreOptions(options, env, quiet));
  holder.connection.onState((state) => {
    offline = state === 'disconnected';
  });
  return holder.connection;
}

/**
 * Builds the permit store: the permit store of the contract on the permits' backend, its calls bounded by that
 * backend's own `callTimeoutMs` (its `postgres`, `redis` or `hazelcast` option).
 */
export function createPermitStore(backends: ModuleBackends): PermitStore {
  return new PermitRecordStore(backends.of.permits);
}

/** Builds the presence store on the presence's backend; none with membership off. */
export function createPresenceStore(options: ResolvedGatekeeperOptions, backends: ModuleBackends): PresenceStore | undefined {
  if (!options.membership) return undefined;
  return new PresenceRecordStore(backends.of.presence);
}

/**
 * Builds the task store: the one the tasks' backend offers of its own (a `TaskStoreSource`), else the task store
 * of the contract on the tasks' backend.
 */
export function createTaskStore(backends: ModuleBackends): TaskStore {
  const backend = backends.of.tasks;
  return ownTaskStore(backend) ?? new TaskRecordStore(backend);
}

/** Builds the run history store on the history's backend. */
export function createHistoryStore(backends: ModuleBackends): HistoryStore {
  return new HistoryRecordStore(backends.of.history);
}

/** Builds the store of runtime schedules on the schedules' backend. */
export function createScheduleStore(backends: ModuleBackends): ScheduleStore {
  return new ScheduleRecordStore(backends.of.schedules);
}

/** Builds the store of "run now" requests, on the schedules' backend. */
export function createRunRequestStore(backends: ModuleBackends): RunRequestStore {
  return new RunRequestRecordStore(backends.of.schedules);
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
