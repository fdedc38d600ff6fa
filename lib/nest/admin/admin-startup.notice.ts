import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ApplicationConfig, ModulesContainer } from '@nestjs/core';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import { messages } from '../gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { moduleRoutePrefix } from '../route-prefix';
import { GatekeeperAdminGuard } from './gatekeeper-admin.guard';

/** Where the admin routes are in the app: `admin.path` under the global prefix and the module's `RouterModule` path. */
export function adminBase(options: ResolvedGatekeeperOptions, config: ApplicationConfig | undefined, modules: ModulesContainer | undefined): string {
  const prefix = moduleRoutePrefix(config, modules, GatekeeperAdminGuard);
  return `/${prefix === '' ? '' : `${prefix}/`}${options.admin!.path}`;
}

/**
 * Says at start-up, in one line, where the admin API is and whether the web console is served: `admin: {}` mounts
 * the API alone, and an operator who opens `<path>/console` should not have to guess why it answers 404.
 */
@Injectable()
export class AdminStartupNotice implements OnApplicationBootstrap {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    private readonly config: ApplicationConfig,
    private readonly modules: ModulesContainer,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.admin) return;
    this.logger.log(messages.adminMounted(adminBase(this.options, this.config, this.modules), this.options.admin.console));
  }
}
