import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GatekeeperExplorer } from './gatekeeper.explorer';
import { ClusterSingletonRunner } from './cluster-singleton.runner';
import type { HazelcastConnection } from '../hazelcast/hazelcast-connection';
import { ClusterService } from './cluster.service';
import { MembershipRuntime } from './membership.runtime';
import { LeaderElections } from './leader-elections';
import { Allocations } from './allocations.runtime';
import { AllocationService } from './allocation.service';
import { GATEKEEPER_CONNECTION, GATEKEEPER_OPTIONS, GATEKEEPER_PRESENCE_STORE, GATEKEEPER_STORE, GATEKEEPER_TASK_STORE } from './gatekeeper.constants';
import { Tasks } from './tasks.runtime';
import { GatekeeperEvents } from './gatekeeper-events';
import { GatekeeperHealthIndicator } from './gatekeeper-health.indicator';
import { GatekeeperMetrics } from './gatekeeper-metrics';
import { GatekeeperTracing } from './gatekeeper-tracing';
import { TaskService } from './task.service';
import { GATEKEEPER_MODULE_OPTIONS, GatekeeperConfigurableModule } from './gatekeeper.module-definition';
import { resolveGatekeeperOptions, type GatekeeperModuleOptions, type ResolvedGatekeeperOptions } from './gatekeeper.options';
import { ExclusiveRuns } from './exclusive-runs';
import { GatekeeperLifecycle } from './gatekeeper.lifecycle';
import { GatekeeperService } from './gatekeeper.service';
import { PermitRuntime } from './permit-runtime';
import { GatekeeperStartup } from './gatekeeper.startup';
import { createConnection, createPermitStore, createPresenceStore, createTaskStore } from './gatekeeper-stores.factory';

/**
 * The gatekeeper: `GatekeeperModule.forRoot({...})` or `forRootAsync({ imports, inject, useFactory })`.
 * Global by default (`isGlobal: false` to scope it). Provides {@link GatekeeperService}, `ClusterService`,
 * `AllocationService`, `TaskService` and `GatekeeperHealthIndicator`, and makes `@ClusterSingleton`, `@LeaderOnly`, `@TaskHandler`,
 * `@GroupFinishedHandler`, `@InvalidTaskHandler` and `@OncePerTrigger` work on any provider's methods.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: GATEKEEPER_OPTIONS,
      useFactory: (options: GatekeeperModuleOptions) => resolveGatekeeperOptions(options),
      inject: [GATEKEEPER_MODULE_OPTIONS],
    },
    {
      provide: GATEKEEPER_CONNECTION,
      useFactory: (options: ResolvedGatekeeperOptions) => createConnection(options),
      inject: [GATEKEEPER_OPTIONS],
    },
    {
      provide: GATEKEEPER_STORE,
      useFactory: (options: ResolvedGatekeeperOptions, connection?: HazelcastConnection) => createPermitStore(options, connection),
      inject: [GATEKEEPER_OPTIONS, GATEKEEPER_CONNECTION],
    },
    {
      provide: GATEKEEPER_PRESENCE_STORE,
      useFactory: (options: ResolvedGatekeeperOptions, connection?: HazelcastConnection) => createPresenceStore(options, connection),
      inject: [GATEKEEPER_OPTIONS, GATEKEEPER_CONNECTION],
    },
    {
      provide: GATEKEEPER_TASK_STORE,
      useFactory: (options: ResolvedGatekeeperOptions, connection?: HazelcastConnection) => createTaskStore(options, connection),
      inject: [GATEKEEPER_OPTIONS, GATEKEEPER_CONNECTION],
    },
    GatekeeperEvents,
    MembershipRuntime,
    LeaderElections,
    Tasks,
    TaskService,
    ClusterService,
    Allocations,
    AllocationService,
    GatekeeperExplorer,
    GatekeeperStartup,
    PermitRuntime,
    ExclusiveRuns,
    GatekeeperLifecycle,
    GatekeeperService,
    ClusterSingletonRunner,
    GatekeeperHealthIndicator,
    GatekeeperMetrics,
    GatekeeperTracing,
  ],
  exports: [GatekeeperService, GatekeeperHealthIndicator, ClusterService, AllocationService, TaskService, ClusterSingletonRunner, LeaderElections, Allocations, Tasks],
})
export class GatekeeperModule extends GatekeeperConfigurableModule {}
