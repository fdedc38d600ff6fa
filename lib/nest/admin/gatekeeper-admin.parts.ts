import type { ModuleMetadata, Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { GATEKEEPER_ADMIN_APP_GUARD, GatekeeperAdminGuard } from './gatekeeper-admin.guard';
import { createClusterAdminController } from './cluster-admin.controller';
import { createAllocationAdminController } from './allocation-admin.controller';
import { createTaskAdminController } from './task-admin.controller';
import { createJobAdminController } from './job-admin.controller';
import { createScheduleAdminController } from './schedule-admin.controller';
import { createGatekeeperAdminController } from './gatekeeper-admin.controller';
import { AdminStartupNotice } from './admin-startup.notice';
import { createConsoleController, createConsoleOffController } from './console.controller';

/** Injection token of the step that puts the admin routes under `admin.path` (or takes them away) at bootstrap. */
const GATEKEEPER_ADMIN_ROUTES = Symbol('gatekeeper:admin_routes');

/** The path the routes have until bootstrap sets `admin.path` (never served: bootstrap always replaces it). */
const UNSET_PATH = 'gatekeeper';

/**
 * The controllers and providers the admin API may add to the module. Nest reads a controller's path when it
 * registers routes, which is after every provider was created: so the routes are declared here, at module
 * definition, and a provider puts them under `admin.path` from the resolved options, or removes them when the
 * options have no `admin` (or no `console`). That is what lets `admin` come from a `forRootAsync` factory, and a
 * bad `admin.token` be reported during bootstrap, with every other option, rather than when the module is imported.
 */
export function gatekeeperAdminParts(): Required<Pick<ModuleMetadata, 'controllers' | 'providers'>> {
  const guard = GatekeeperAdminGuard;
  const api = [
    createGatekeeperAdminController(UNSET_PATH, guard),
    createClusterAdminController(UNSET_PATH, guard),
    createAllocationAdminController(UNSET_PATH, guard),
    createTaskAdminController(UNSET_PATH, guard),
    createJobAdminController(UNSET_PATH, guard),
    createScheduleAdminController(UNSET_PATH, guard),
  ];
  const page = createConsoleController();
  const pageOff = createConsoleOffController();
  return {
    controllers: [...api, page, pageOff],
    providers: [
      AdminStartupNotice,
      GatekeeperAdminGuard,
      {
        provide: GATEKEEPER_ADMIN_APP_GUARD,
        // A class is created in this module's scope (what it injects is looked up as for any provider here).
        useFactory: async (options: ResolvedGatekeeperOptions, moduleRef: ModuleRef) => {
          const appGuard = options.admin?.guard;
          if (!appGuard) return null;
          return typeof appGuard === 'function' ? moduleRef.create(appGuard) : appGuard;
        },
        inject: [GATEKEEPER_OPTIONS, ModuleRef],
      },
      {
        provide: GATEKEEPER_ADMIN_ROUTES,
        useFactory: (options: ResolvedGatekeeperOptions, modules: ModulesContainer) => mountAdminRoutes(options, api, page, pageOff, modules),
        inject: [GATEKEEPER_OPTIONS, ModulesContainer],
      },
    ],
  };
}

/**
 * Puts the admin controllers under `admin.path` (the console under `<path>/console`, or with `console` off the page
 * that says how to turn it on), or unregisters those not asked for.
 */
function mountAdminRoutes(options: ResolvedGatekeeperOptions, api: Type[], page: Type, pageOff: Type, modules: ModulesContainer): true {
  const admin = options.admin;
  const unmounted: Type[] = [];
  for (const controller of api) {
    if (admin) Reflect.defineMetadata(PATH_METADATA, admin.path, controller);
    else unmounted.push(controller);
  }
  const [served, unserved] = admin?.console ? [page, pageOff] : [pageOff, page];
  if (admin) Reflect.defineMetadata(PATH_METADATA, `${admin.path}/console`, served);
  else unmounted.push(served);
  unmounted.push(unserved);
  if (unmounted.length > 0) {
    for (const module of modules.values()) {
      for (const controller of unmounted) module.controllers.delete(controller);
    }
  }
  return true;
}
