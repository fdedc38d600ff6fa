import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ClusterSingletonExplorer } from './cluster-singleton.explorer';
import { ClusterSingletonRunner } from './cluster-singleton.runner';
import { GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from './gatekeeper.constants';
import { GATEKEEPER_MODULE_OPTIONS, GatekeeperConfigurableModule } from './gatekeeper.module-definition';
import { resolveGatekeeperOptions, type GatekeeperModuleOptions, type ResolvedGatekeeperOptions } from './gatekeeper.options';
import { ExclusiveRuns } from './exclusive-runs';
import { GatekeeperLifecycle } from './gatekeeper.lifecycle';
import { GatekeeperService } from './gatekeeper.service';
import { PermitRuntime } from './permit-runtime';
import { GatekeeperStartup } from './gatekeeper.startup';
import { createPermitStore } from './permit-store.factory';

/**
 * The gatekeeper: `GatekeeperModule.forRoot({...})` or `forRootAsync({ imports, inject, useFactory })`.
 * Global by default (`isGlobal: false` to scope it). Provides {@link GatekeeperService} and makes
 * `@ClusterSingleton` work on any provider's methods.
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
      provide: GATEKEEPER_STORE,
      useFactory: (options: ResolvedGatekeeperOptions) => createPermitStore(options),
      inject: [GATEKEEPER_OPTIONS],
    },
    ClusterSingletonExplorer,
    GatekeeperStartup,
    PermitRuntime,
    ExclusiveRuns,
    GatekeeperLifecycle,
    GatekeeperService,
    ClusterSingletonRunner,
  ],
  exports: [GatekeeperService, ClusterSingletonRunner],
})
export class GatekeeperModule extends GatekeeperConfigurableModule {}
