import type { CanActivate, Type } from '@nestjs/common';

/**
 * The admin HTTP API (off unless given). It needs protection: either your own `guard`, or a `token` that callers
 * send as `Authorization: Bearer <token>`. With neither, the module refuses to start.
 */
export interface GatekeeperAdminOptions {
  /** Route prefix. Default `'gatekeeper'`, so routes are `/gatekeeper/definitions`, `/gatekeeper/permits`, `/gatekeeper/cluster`, `/gatekeeper/elections/:name`, .... */
  path?: string;
  /** A guard class of yours (resolved by Nest, so it may inject what your app provides globally). */
  guard?: Type<CanActivate>;
  /** A shared secret callers send as `Authorization: Bearer <token>`. At least 16 characters. */
  token?: string;
  /**
   * Serve the web console at `<path>/console` (off by default): definitions, permits, the cluster, allocations and
   * tasks, live, with the admin actions. Behind the same protection: with a `guard`, the page and its calls go
   * through it; with a `token`, the page asks for it once and keeps a session cookie (HttpOnly, SameSite=Strict).
   */
  console?: boolean;
}
