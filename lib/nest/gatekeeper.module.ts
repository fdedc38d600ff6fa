import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GatekeeperExplorer } from './gatekeeper.explorer';
import { ClusterSingletonRunner } from './schedules/cluster-singleton.runner';
import { JobRegistry } from './schedules/job-registry';
import { RuntimeSchedules } from './schedules/runtime-schedules';
import { SchedulesRuntime } from './schedules/schedules.runtime';
import { ScheduleService } from './schedules/schedule.service';
import { ClusterService } from './elections/cluster.service';
import { PresenceRuntime } from './presence/presence.runtime';
import { ElectionsRuntime } from './elections/elections.runtime';
import type { LeaderRunLog } from '../elections/leader-run-log';
import { AllocationRuntime } from './allocation/allocation.runtime';
import { AllocationService } from './allocation/allocation.service';
import { FencedGuard } from './fencing/fenced.decorator';
import { HttpFences } from './fencing/http-fences';
import { GATEKEEPER_BACKENDS, GATEKEEPER_CONNECTION, GATEKEEPER_HISTORY_STORE, GATEKEEPER_LEADER_RUNS, GATEKEEPER_OPTIONS, GATEKEEPER_RUN_REQUEST_STORE, GATEKEEPER_SCHEDULE_STORE, GATEKEEPER_PRESENCE_STORE, GATEKEEPER_STORE, GATEKEEPER_TASK_STORE } from './gatekeeper.constants';
import { TasksRuntime } from './tasks/tasks.runtime';
import { GatekeeperEvents } from './signals/gatekeeper-events';
import { GatekeeperHealthIndicator } from './readouts/gatekeeper-health.indicator';
import { GatekeeperMetrics } from './readouts/gatekeeper-metrics';
import { GatekeeperTracing } from './signals/gatekeeper-tracing';
import { TaskService } from './tasks/task.service';
import {
  GATEKEEPER_MODULE_OPTIONS, GatekeeperConfigurableModule, type GatekeeperModuleAsyncOptions, type GatekeeperModuleExtras,
} from './gatekeeper.module-definition';
import type { GatekeeperAdminOptions } from './options/gatekeeper-admin.options';
import { gatekeeperAdminParts } from './admin/gatekeeper-admin.parts';
import type { GatekeeperModuleOptions, ResolvedGatekeeperOptions } from './options/gatekeeper.options';
import { resolveGatekeeperOptions } from './options/gatekeeper-options.resolver';
import { GatekeeperLifecycle } from './gatekeeper.lifecycle';
import { GatekeeperService } from './permits/gatekeeper.service';
import { SemaphoreAdminService } from './permits/semaphore-admin.service';
import { PermitsRuntime } from './permits/permits.runtime';
import { PermitsStartup } from './permits/permits.startup';
import { createBackends, createPermitStore, createHistoryStore, createPresenceStore, createRunRequestStore, createScheduleStore, createTaskStore, type ModuleBackends } from './gatekeeper-stores.factory';

/** Injection token of `admin` given next to `forRootAsync`'s `useFactory` (the factory's own `admin` wins). */
const GATEKEEPER_ADMIN_EXTRA = Symbol('gatekeeper:admin_extra');

/**
 * The gatekeeper: `GatekeeperModule.forRoot({...})` or `forRootAsync({ imports, inject, useFactory })`.
 * Global by default (`isGlobal: false` to scope it). Provides {@link GatekeeperService}, `SemaphoreAdminService`,
 * `ClusterService`, `AllocationService`, `TaskService`, `ScheduleService` and `GatekeeperHealthIndicator`, and makes `@ClusterSingleton`, `@LeaderOnly`, `@TaskHandler`,
 * `@GroupFinishedHandler`, `@InvalidTaskHandler` and `@OncePerTrigger` work on any provider's methods.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: GATEKEEPER_OPTIONS,
      useFactory: (options: GatekeeperModuleOptions, admin?: GatekeeperAdminOptions) =>
        resolveGatekeeperOptions(admin !== undefined && options?.admin === undefined ? { ...options, admin } : options),
      inject: [GATEKEEPER_MODULE_OPTIONS, { token: GATEKEEPER_ADMIN_EXTRA, optional: true }],
    },
    {
      provide: GATEKEEPER_BACKENDS,
      useFactory: (options: ResolvedGatekeeperOptions) => createBackends(options),
      inject: [GATEKEEPER_OPTIONS],
    },
    {
      provide: GATEKEEPER_CONNECTION,
      useFactory: (backends: ModuleBackends) => backends.connection,
      inject: [GATEKEEPER_BACKENDS],
    },
    ...([
      [GATEKEEPER_STORE, createPermitStore],
      [GATEKEEPER_TASK_STORE, createTaskStore],
      [GATEKEEPER_HISTORY_STORE, createHistoryStore],
      [GATEKEEPER_SCHEDULE_STORE, createScheduleStore],
      [GATEKEEPER_RUN_REQUEST_STORE, createRunRequestStore],
    ] as const).map(([provide, create]) => ({ provide, useFactory: create, inject: [GATEKEEPER_BACKENDS] })),
    { provide: GATEKEEPER_PRESENCE_STORE, useFactory: createPresenceStore, inject: [GATEKEEPER_OPTIONS, GATEKEEPER_BACKENDS] },
    {
      // @LeaderOnly runs go to the jobs' run history: the elections never import the schedules, so it is wired here.
      provide: GATEKEEPER_LEADER_RUNS,
      useFactory: (schedules: SchedulesRuntime): LeaderRunLog => schedules.recorder,
      inject: [SchedulesRuntime],
    },
    GatekeeperEvents,
    RuntimeSchedules,
    JobRegistry,
    SchedulesRuntime,
    ScheduleService,
    PresenceRuntime,
    ElectionsRuntime,
    TasksRuntime,
    TaskService,
    ClusterService,
    AllocationRuntime,
    AllocationService,
    GatekeeperExplorer,
    PermitsStartup,
    PermitsRuntime,
    GatekeeperLifecycle,
    GatekeeperService,
    SemaphoreAdminService,
    ClusterSingletonRunner,
    GatekeeperHealthIndicator,
    GatekeeperMetrics,
    GatekeeperTracing,
    HttpFences,
    FencedGuard,
  ],
  exports: [HttpFences, FencedGuard, GatekeeperService, SemaphoreAdminService, GatekeeperHealthIndicator, ClusterService, AllocationService, TaskService, ScheduleService, SchedulesRuntime, ClusterSingletonRunner, ElectionsRuntime, AllocationRuntime, TasksRuntime],
})
export class GatekeeperModule extends GatekeeperConfigurableModule {
  /**
   * The module with these options (the {@link GatekeeperModuleOptions} and the {@link GatekeeperModuleExtras}); with
   * `admin`, the admin routes too (checked, and put under `admin.path`, at bootstrap).
   */
  static forRoot(options: GatekeeperModuleOptions & Partial<GatekeeperModuleExtras>): DynamicModule {
    const module = super.forRoot(options);
    return options?.admin === undefined ? module : withAdminRoutes(module);
  }

  /**
   * The module with options from a factory. Every option may come from it, `admin` included: the admin routes are
   * declared here and mounted at bootstrap only if the factory's options (or `admin` given next to `useFactory`) ask.
   */
  static forRootAsync(options: GatekeeperModuleAsyncOptions): DynamicModule {
    const module = withAdminRoutes(super.forRootAsync(options));
    if (options.admin === undefined) return module;
    return { ...module, providers: [...(module.providers ?? []), { provide: GATEKEEPER_ADMIN_EXTRA, useValue: options.admin }] };
  }
}

function withAdminRoutes(module: DynamicModule): DynamicModule {
  const admin = gatekeeperAdminParts();
  return { ...module, controllers: [...(module.controllers ?? []), ...admin.controllers], providers: [...(module.providers ?? []), ...admin.providers] };
}
