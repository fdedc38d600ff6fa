import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { InvalidDefinitionError } from '../../core/errors/invalid-definition.error';
import { AdminTokenGuard, GATEKEEPER_ADMIN_TOKEN } from './admin-token.guard';
import { createClusterAdminController } from './cluster-admin.controller';
import { createAllocationAdminController } from './allocation-admin.controller';
import { createTaskAdminController } from './task-admin.controller';
import { createGatekeeperAdminController } from './gatekeeper-admin.controller';
import { createConsoleController } from './console.controller';
import type { GatekeeperAdminOptions } from './gatekeeper-admin.options';

/** The controllers and providers the admin API adds to the module. Validates its options at module definition. */
export function gatekeeperAdminParts(options: GatekeeperAdminOptions | undefined): Required<Pick<ModuleMetadata, 'controllers' | 'providers'>> {
  if (!options) return { controllers: [], providers: [] };
  const path = options.path ?? 'gatekeeper';
  if (typeof path !== 'string' || path.trim() === '') {
    throw new InvalidDefinitionError('<module options>', 'admin.path', 'must be a non-empty route prefix');
  }
  if (options.console !== undefined && typeof options.console !== 'boolean') {
    throw new InvalidDefinitionError('<module options>', 'admin.console', `must be true or false, got ${JSON.stringify(options.console)}`);
  }
  const page = (guard: Type<CanActivate>, tokenMode: boolean) => (options.console ? [createConsoleController(path, guard, tokenMode)] : []);
  if (options.guard) {
    return { controllers: [...controllers(path, options.guard), ...page(options.guard, false)], providers: [options.guard] };
  }
  if (typeof options.token !== 'string' || options.token.length < 16) {
    throw new InvalidDefinitionError(
      '<module options>',
      'admin.token',
      'the admin API must be protected: give admin.guard, or admin.token of at least 16 characters',
    );
  }
  return {
    controllers: [...controllers(path, AdminTokenGuard), ...page(AdminTokenGuard, true)],
    providers: [{ provide: GATEKEEPER_ADMIN_TOKEN, useValue: options.token }, AdminTokenGuard],
  };
}

/** The admin controllers under one prefix and guard: definitions and permits, the cluster and its elections, allocations, tasks. */
function controllers(path: string, guard: Type<CanActivate>): Type[] {
  return [createGatekeeperAdminController(path, guard), createClusterAdminController(path, guard), createAllocationAdminController(path, guard), createTaskAdminController(path, guard)];
}
