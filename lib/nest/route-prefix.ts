import type { Type } from '@nestjs/common';
import { MODULE_PATH } from '@nestjs/common/constants';
import type { ApplicationConfig, ModulesContainer } from '@nestjs/core';

/**
 * The path this module's routes sit under in the app, as Nest registers them: the app's global prefix
 * (`app.setGlobalPrefix('api')`), then the path a `RouterModule` mounts the module at
 * (`RouterModule.register([{ path: 'ops', module: GatekeeperModule }])`), joined without leading or trailing
 * slashes (`api/ops`); `''` when neither is set. Read once the app is set up (when it listens, on a request): the
 * address a node advertises and the console's links are built on it.
 *
 * A global prefix whose `exclude` list names the admin routes is not seen here: such an app sets
 * `membership.httpAddress`.
 */
export function moduleRoutePrefix(config: ApplicationConfig | undefined, modules: ModulesContainer | undefined, host: Type): string {
  const global = config?.getGlobalPrefix() ?? '';
  const mounted = modules ? modulePath(modules, host) : '';
  return [global, mounted].map((part) => part.replace(/^\/+|\/+$/g, '')).filter((part) => part !== '').join('/');
}

/** The `RouterModule` path of the module that provides `host` (the app's own first, as `RoutesResolver` reads it). */
function modulePath(modules: ModulesContainer, host: Type): string {
  for (const module of modules.values()) {
    if (!module.providers.has(host)) continue;
    const path: unknown =
      Reflect.getMetadata(MODULE_PATH + modules.applicationId, module.metatype) ?? Reflect.getMetadata(MODULE_PATH, module.metatype);
    return typeof path === 'string' ? path : '';
  }
  return '';
}
