import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { AdminTokenGuard } from './admin-token.guard';

/** Injection token of the app's own admin guard, resolved at bootstrap (`null` with a token). */
export const GATEKEEPER_ADMIN_APP_GUARD = Symbol('gatekeeper:admin_app_guard');

const CONSOLE_PAGE = 'gatekeeper:console_page';

/** Marks the console's page: open with a token (it asks for the token itself), behind the app's guard otherwise. */
export const ConsolePage = () => SetMetadata(CONSOLE_PAGE, true);

/**
 * The one guard on every admin route: the app's `admin.guard` when it gave one, else the token guard. Chosen per
 * request from the resolved options, so both may come from a `forRootAsync` factory.
 */
@Injectable()
export class GatekeeperAdminGuard implements CanActivate {
  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_ADMIN_APP_GUARD) private readonly appGuard: CanActivate | null,
    private readonly tokens: AdminTokenGuard,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): ReturnType<CanActivate['canActivate']> {
    if (this.appGuard) return this.appGuard.canActivate(context);
    if (this.reflector.get<boolean>(CONSOLE_PAGE, context.getHandler())) return true;
    return this.tokens.canActivate(context);
  }

  /** Whether the console signs in with the token (else through the app's guard). */
  get tokenMode(): boolean {
    return !this.appGuard && this.options.admin?.token !== undefined;
  }
}
