import { ForbiddenException, Inject, Injectable, SetMetadata, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { setResponseHeader, type HeaderTarget } from './http-platform';

/** Injection token of the app's own admin guard, resolved at bootstrap (`null` with a token). */
export const GATEKEEPER_ADMIN_APP_GUARD = Symbol('gatekeeper:admin_app_guard');

const CONSOLE_PAGE = 'gatekeeper:console_page';

/** Marks the console's page: open with a token (it asks for the token itself), behind the app's guard otherwise. */
export const ConsolePage = () => SetMetadata(CONSOLE_PAGE, true);

/** The cookie the console's sign-in sets (HttpOnly, SameSite=Strict): a value derived from the token, not the token. */
export const CONSOLE_SESSION_COOKIE = 'gatekeeper_console';

/** The header the console sends with every change: a cross-site form cannot set it (a second guard besides SameSite). */
export const CONSOLE_HEADER = 'x-gatekeeper-console';

/** The challenge a 401 carries (RFC 6750): the API takes a bearer token. */
export const ADMIN_CHALLENGE = 'Bearer realm="gatekeeper"';

/** The console session's cookie value for `token`. */
function consoleSession(token: string): string {
  return createHmac('sha256', token).update('gatekeeper console session').digest('base64url');
}

/** Compares two secrets in constant time. */
function sameSecret(given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

/** A request as the guard reads it (Express and Fastify alike). */
interface AdminRequest {
  readonly method: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** What a request's credentials are worth: none given (401), given but wrong or not enough (403), or good. */
export type CredentialsVerdict = 'allowed' | 'missing' | 'refused';

/**
 * The one guard on every admin route: the app's `admin.guard` when it gave one, else the admin token. With the token,
 * a request goes through with `Authorization: Bearer <token>` (compared in constant time), or, from the console, with
 * its session cookie: for a change (not GET) the console's header must be there too. Without credentials it answers
 * 401 with `WWW-Authenticate: Bearer`; with wrong ones 403. Chosen per request from the resolved options, so the
 * guard and the token may come from a `forRootAsync` factory.
 */
@Injectable()
export class GatekeeperAdminGuard implements CanActivate {
  private secrets?: { expected: Buffer; session: Buffer };

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_ADMIN_APP_GUARD) private readonly appGuard: CanActivate | null,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): ReturnType<CanActivate['canActivate']> {
    if (this.appGuard) return this.appGuard.canActivate(context);
    if (this.reflector.get<boolean>(CONSOLE_PAGE, context.getHandler())) return true;
    const http = context.switchToHttp();
    const verdict = this.check(http.getRequest<AdminRequest>());
    if (verdict === 'allowed') return true;
    if (verdict === 'missing') {
      setResponseHeader(http.getResponse<HeaderTarget>(), 'WWW-Authenticate', ADMIN_CHALLENGE);
      throw new UnauthorizedException('Send the admin token: Authorization: Bearer <token>');
    }
    throw new ForbiddenException('The admin token (or the console session) is not valid for this request');
  }

  /** Whether the console signs in with the token (else through the app's guard). */
  get tokenMode(): boolean {
    return !this.appGuard && this.options.admin?.token !== undefined;
  }

  /** Whether `given` is the token (the console's sign-in). */
  isToken(given: string): boolean {
    return sameSecret(given, this.keys().expected);
  }

  /** The console session's cookie value (derived from the token). */
  get sessionValue(): string {
    return this.keys().session.toString();
  }

  /** Whether `request` carries the token, or the console's session (and, for a change, its header). */
  allows(request: AdminRequest): boolean {
    return this.check(request) === 'allowed';
  }

  /** What `request`'s credentials are worth: a bearer token first, else the console's session cookie. */
  check(request: AdminRequest): CredentialsVerdict {
    const header = request.headers['authorization'];
    const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
    if (match) return sameSecret(match[1].trim(), this.keys().expected) ? 'allowed' : 'refused';
    const cookie = readCookie(request.headers['cookie'], CONSOLE_SESSION_COOKIE);
    // No bearer token and no session: nothing this API takes was sent (another scheme, e.g. Basic, counts as none).
    if (cookie === undefined) return 'missing';
    if (!sameSecret(cookie, this.keys().session)) return 'refused';
    return request.method === 'GET' || request.method === 'HEAD' || request.headers[CONSOLE_HEADER] === '1' ? 'allowed' : 'refused';
  }

  private keys(): { expected: Buffer; session: Buffer } {
    const token = this.options.admin?.token;
    // Only mounted with a token; a guard of the app's never reaches here, and an empty secret must never match.
    if (token === undefined) throw new ForbiddenException('The admin API takes no token here');
    this.secrets ??= { expected: Buffer.from(token), session: Buffer.from(consoleSession(token)) };
    return this.secrets;
  }
}

/** One cookie's value from a `Cookie` header. */
function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  for (const part of text?.split(';') ?? []) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeCookie(part.slice(at + 1).trim());
  }
  return undefined;
}

/** A cookie value decoded; a malformed escape is kept as sent (it then matches no session) rather than a 500. */
function decodeCookie(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
