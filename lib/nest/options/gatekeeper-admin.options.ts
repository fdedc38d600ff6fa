import type { CanActivate, Type } from '@nestjs/common';
import { z } from 'zod';
import { ENV } from '../../core/env-vars';
import { withReason } from '../../core/input-schema';
import { absentAs } from '../../core/input-fields';
import { trueOrFalseOption } from './option-fields';
import { notAnOption, optionsObject, parseOption } from './option-schema';
import { invalidOption } from '../../core/errors/input.errors';

/**
 * The admin HTTP API (off unless given). It needs protection: either your own `guard`, or a `token` that callers
 * send as `Authorization: Bearer <token>`; with neither, the token is the environment variable `GATEKEEPER_ADMIN_TOKEN`
 * (which the CLI reads too), so `admin: {}` mounts it behind that variable. With no token at all, the module refuses
 * to start. Like every option, it may come from `forRoot` or from a `forRootAsync` factory (e.g. the token from
 * `ConfigService`).
 */
export interface GatekeeperAdminOptions {
  /** Route prefix. Default `'gatekeeper'`, so routes are `/gatekeeper/definitions`, `/gatekeeper/permits`, `/gatekeeper/cluster`, `/gatekeeper/elections/:name`, .... */
  path?: string;
  /**
   * A guard of yours: a class (resolved by Nest in the module's scope, so it may inject what your app provides
   * globally) or an instance. It decides alone: its `false` answers 403.
   */
  guard?: Type<CanActivate> | CanActivate;
  /**
   * A shared secret callers send as `Authorization: Bearer <token>`. At least 16 characters. A request without it
   * answers 401 (with `WWW-Authenticate: Bearer`), one with a wrong token 403. Default (without a `guard`): the
   * environment variable `GATEKEEPER_ADMIN_TOKEN`, the one the CLI's `jobs describe`, `run`, `pause` and `resume` send.
   */
  token?: string;
  /**
   * Serve the web console at `<path>/console` (off by default): definitions, permits, jobs, the cluster, allocations and
   * tasks, live, with the admin actions. Behind the same protection: with a `guard`, the page and its calls go
   * through it; with a `token`, the page asks for it once and keeps a session cookie (HttpOnly, SameSite=Strict).
   */
  console?: boolean;
}

/** The admin options after defaults and validation. */
export interface ResolvedAdminOptions {
  /** The route prefix without leading or trailing slashes (`ops/gatekeeper`). */
  readonly path: string;
  readonly console: boolean;
  readonly guard?: Type<CanActivate> | CanActivate;
  readonly token?: string;
}

/** The least length of `admin.token`. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** The environment variable `admin.token` defaults to, and the CLI sends: one setting for both sides. */
const ADMIN_TOKEN_ENV = ENV.adminToken;

const ROUTE_PREFIX = absentAs(
  'gatekeeper',
  withReason(
    z.string().transform((given) => given.trim().replace(/^\/+|\/+$/g, '')).pipe(z.string().min(1)),
    (given) => `must be a non-empty route prefix, got ${JSON.stringify(given)}`,
  ),
);

/** A guard class, or an instance with `canActivate()`. */
const GUARD = z.custom<Type<CanActivate> | CanActivate>(
  (guard) => typeof guard === 'function' || typeof (guard as Partial<CanActivate>).canActivate === 'function',
  'must be a guard class or an object with canActivate()',
);

// Fields in the order they are checked; the messages list them as the interface does. The token is checked after
// the shape: whether it may be given, and where it comes from, depend on the guard.
export const ADMIN_OPTIONS = optionsObject(
  { path: ROUTE_PREFIX, console: trueOrFalseOption.optional(), guard: GUARD.nullish(), token: z.unknown().optional() } satisfies Record<keyof GatekeeperAdminOptions, z.ZodType>,
  {
    notObject: (given) => `must be an object { path, guard, token, console }, got ${JSON.stringify(given)}`,
    unknownKey: notAnOption(['path', 'guard', 'token', 'console'] satisfies Array<keyof GatekeeperAdminOptions>),
  },
);

const ADMIN_TOKEN = withReason(
  z.string().min(MIN_ADMIN_TOKEN_LENGTH),
  (given) =>
    `the admin API must be protected: give admin.guard, or admin.token of at least ${MIN_ADMIN_TOKEN_LENGTH} characters ` +
    `(got ${typeof given === 'string' ? `${given.length} characters` : JSON.stringify(given)})`,
);

/**
 * Validates the `admin` option at bootstrap (the token from `env` when neither `token` nor `guard` is given); throws
 * {@link InvalidInputError} naming `admin.<field>`, and the environment variable when the token came from it.
 */
export function resolveAdminOptions(admin: GatekeeperAdminOptions | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedAdminOptions | undefined {
  if (admin === undefined || admin === null) return undefined;
  const { path, console = false, guard, token } = parseOption(ADMIN_OPTIONS, admin, 'admin');
  if (guard !== undefined && guard !== null) {
    if (token !== undefined) throw invalidOption('admin.token', 'give admin.guard or admin.token, not both (the guard would decide alone)');
    return { path, console, guard };
  }
  if (token === undefined) return { path, console, token: envToken(env) };
  return { path, console, token: parseOption(ADMIN_TOKEN, token, 'admin.token') };
}

/** The token from {@link ADMIN_TOKEN_ENV}, which must be set and long enough. */
function envToken(env: NodeJS.ProcessEnv): string {
  const token = env[ADMIN_TOKEN_ENV];
  if (token === undefined || token === '') {
    throw invalidOption(
      'admin.token',
      `the admin API must be protected: set ${ADMIN_TOKEN_ENV} (at least ${MIN_ADMIN_TOKEN_LENGTH} characters; the CLI sends the same variable), ` +
        'or give admin.token or admin.guard',
    );
  }
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw invalidOption('admin.token', `${ADMIN_TOKEN_ENV} (the admin token) must have at least ${MIN_ADMIN_TOKEN_LENGTH} characters, got ${token.length}`);
  }
  return token;
}
