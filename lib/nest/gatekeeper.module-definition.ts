import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { GatekeeperModuleOptions } from './gatekeeper.options';
import { gatekeeperAdminParts } from './admin/gatekeeper-admin.parts';
import type { GatekeeperAdminOptions } from './admin/gatekeeper-admin.options';

/** Extra options of `forRoot` / `forRootAsync` besides {@link GatekeeperModuleOptions}. */
export interface GatekeeperModuleExtras {
  /** Register the module globally, so every module can inject `GatekeeperService` and use `@ClusterSingleton`. Default `true`. */
  isGlobal?: boolean;
  /** Mount the admin HTTP API (off by default). Needs a guard or a token; see {@link GatekeeperAdminOptions}. */
  admin?: GatekeeperAdminOptions;
}

/**
 * Built by Nest's `ConfigurableModuleBuilder`: `GatekeeperConfigurableModule` gives `forRoot` / `forRootAsync`;
 * `GATEKEEPER_MODULE_OPTIONS` is the token of the raw options as given (inject it to read them back).
 */
export const {
  ConfigurableModuleClass: GatekeeperConfigurableModule,
  MODULE_OPTIONS_TOKEN: GATEKEEPER_MODULE_OPTIONS,
  OPTIONS_TYPE: GATEKEEPER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: GATEKEEPER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<GatekeeperModuleOptions>({ moduleName: 'Gatekeeper' })
  .setClassMethodName('forRoot')
  // Every extra is listed in the defaults: Nest strips exactly these keys from the module options.
  .setExtras<GatekeeperModuleExtras>({ isGlobal: true, admin: undefined }, (definition, extras) => {
    const admin = gatekeeperAdminParts(extras.admin);
    return {
      ...definition,
      global: extras.isGlobal ?? true,
      controllers: [...(definition.controllers ?? []), ...admin.controllers],
      providers: [...(definition.providers ?? []), ...admin.providers],
    };
  })
  .build();
