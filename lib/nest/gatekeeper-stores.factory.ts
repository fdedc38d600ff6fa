import { Logger } from '@nestjs/common';
import { HazelcastBackend } from '../backends/hazelcast/hazelcast-backend';
import type { HazelcastConnection } from '../backends/hazelcast/hazelcast-connection';
import { moduleConnection } from '../backends/hazelcast/hazelcast-module-connection';
import { MemoryBackend } from '../backends/memory/memory-backend';
import { POSTGRES_BACKEND } from '../backends/postgres/postgres-backend.kind';
import { REDIS_BACKEND } from '../backends/redis/redis-backend.kind';
import { PresenceRecordStore } from '../presence/presence-record.store';
import type { PresenceStore } from '../presence/presence-store';
import { PermitRecordStore } from '../permits/permit-record.store';
import type { PermitStore } from '../permits/permit-store';
import type { ConnectTarget } from '../store/connect-failure';
import { serverBackend, type ServerBackend } from '../store/server-backend';
import type { StoreBackend } from '../store/store-backend';
import { followStoreClock } from '../store/store-clock';
import { TaskRecordStore } from '../store/tasks/task-record.store';
import type { TaskStore } from '../store/tasks/task-store';
import { HistoryRecordStore } from '../schedules/history-record.store';
import type { HistoryStore } from '../schedules/history-store';
import { RunRequestRecordStore, type RunRequestStore } from '../schedules/run-request.store';
import { ScheduleRecordStore } from '../schedules/schedule-record.store';
import type { ScheduleStore } from '../schedules/schedule-store';
import { GATEKEEPER_LOGGER_CONTEXT } from './gatekeeper.constants';
import { layoutOf } from './store-layout';
import type { StoreLayout } from '../presence/store-place';
import type { ResolvedGatekeeperOptions } from './options/gatekeeper.options';
import { CAPABILITY_STATES, type CapabilityState } from '../core/capability-state';
import { usesHazelcast, type BackendChoice } from './options/backend-choice.options';

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
  /**
   * The server the permits' backend connects to, when the options made it (PostgreSQL, Redis): start-up waits for
   * it and names it (see {@link StoreBackend.describe}); else `undefined`.
   */
  readonly target?: ConnectTarget;
  /** Where each capability keeps its state, as this node announces it in its presence (see `Presence.stores`). */
  readonly layout: StoreLayout;
}

/**
 * Builds the backends the options ask for (nothing connects until a store opens its backend; each backend's client is
 * loaded only when it is used, so `hazelcast-client`, `pg` and `ioredis` are needed only by the applications on them).
 */
export function createBackends(options: ResolvedGatekeeperOptions, env: NodeJS.ProcessEnv = process.env): ModuleBackends {
  const connection = usesHazelcast(options.backends) ? moduleConnection(options.hazelcast, options, env, new Logger('Hazelcast')) : undefined;
  const logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  const reports = { error: (message: string) => logger.error(message), warn: (message: string) => logger.warn(message) };
  // One backend per name the options use, made at its first use; a backend given as an instance, as this module's
  // node of it (StoreBackend.node): once per module.
  const made = new Map<BackendChoice, ServerBackend>();
  const make = (choice: BackendChoice): ServerBackend => {
    if (choice === 'memory') return { backend: new MemoryBackend({ clock: options.clock }) };
    if (choice === 'postgres') return serverBackend(POSTGRES_BACKEND, options.postgres, env, reports);
    if (choice === 'redis') return serverBackend(REDIS_BACKEND, options.redis, env, reports);
    if (choice === 'hazelcast') {
      const { mapPrefix, callTimeoutMs } = options.hazelcast;
      return { backend: new HazelcastBackend({ connection, mapPrefix, callTimeoutMs, clock: options.clock }) };
    }
    return { backend: choice.node?.() ?? choice };
  };
  const pick = (choice: BackendChoice): ServerBackend => made.get(choice) ?? made.set(choice, make(choice)).get(choice)!;
  const of = Object.fromEntries(CAPABILITY_STATES.map((state) => [state, pick(options.backends[state]).backend])) as Record<CapabilityState, StoreBackend>;
  // Leases are timed by their store's clock where it has one (PostgreSQL, Redis): see StoreClock.
  followStoreClock(options.permitClock, of.permits);
  if (!options.taskClock.isAttached()) followStoreClock(options.taskClock, of.tasks);
  return { connection, of, target: pick(options.backends.permits).target, layout: layoutOf(of) };
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
 * Builds the task store: the one the tasks' backend offers of its own (`StoreBackend.taskStore`), else the task store
 * of the contract on the tasks' backend.
 */
export function createTaskStore(backends: ModuleBackends): TaskStore {
  const backend = backends.of.tasks;
  return backend.taskStore?.() ?? new TaskRecordStore(backend);
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
