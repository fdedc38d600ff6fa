import { ConfigurableModuleBuilder, type ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { GatekeeperModuleOptions } from './options/gatekeeper.options';
import type { GatekeeperAdminOptions } from './options/gatekeeper-admin.options';

/** Extra options of `forRoot` / `forRootAsync` besides {@link GatekeeperModuleOptions}. */
export interface GatekeeperModuleExtras {
  /** Register the module globally, so every module can inject `GatekeeperService` and use `@ClusterSingleton`. Default `true`. */
  isGlobal?: boolean;
  /**
   * `forRootAsync` only: the admin options next to `useFactory` (as before they could come from the factory). The
   * factory's `admin`, when it returns one, wins. See {@link GatekeeperModuleOptions.admin}.
   */
  admin?: GatekeeperAdminOptions;
}

// Built by Nest's `ConfigurableModuleBuilder`; each part is exported on its own below so each can carry its doc.
const definition = new ConfigurableModuleBuilder<GatekeeperModuleOptions>({ moduleName: 'Gatekeeper' })
  .setClassMethodName('forRoot')
  // Nest strips exactly the keys listed here from forRoot's options: `admin` is not among them, so it stays a
  // module option (the module decides at bootstrap whether to mount the admin routes; see gatekeeperAdminParts).
  .setExtras<GatekeeperModuleExtras>({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal ?? true }))
  .build();

/**
 * The base class of `GatekeeperModule` that gives it `forRoot` / `forRootAsync`. Use `GatekeeperModule`; the root
 * entry exports this class only because the module's declared type extends it.
 */
export const GatekeeperConfigurableModule = definition.ConfigurableModuleClass;

/** The token of the raw module options as given (inject it to read them back). */
export const GATEKEEPER_MODULE_OPTIONS = definition.MODULE_OPTIONS_TOKEN;


/**
 * What `GatekeeperModule.forRootAsync()` takes: Nest's async options (`imports`, `inject` and `useFactory`,
 * `useClass` or `useExisting`) producing {@link GatekeeperModuleOptions}, and the {@link GatekeeperModuleExtras}.
 */
export type GatekeeperModuleAsyncOptions = ConfigurableModuleAsyncOptions<GatekeeperModuleOptions, 'create'> & Partial<GatekeeperModuleExtras>;
