import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Injection token of the admin API's shared secret. */
export const GATEKEEPER_ADMIN_TOKEN = Symbol('gatekeeper:admin_token');

/** The cookie the console's sign-in sets (HttpOnly, SameSite=Strict): a value derived from the token, not the token. */
export const CONSOLE_SESSION_COOKIE = 'gatekeeper_console';

/** The header the console sends with every change: a cross-site form cannot set it (a second guard besides SameSite). */
export const CONSOLE_HEADER = 'x-gatekeeper-console';

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

/**
 * Lets a request through with `Authorization: Bearer <token>` (compared in constant time), or, from the console,
 * with its session cookie: for a change (not GET) the console's header must be there too.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer;
  private readonly session: Buffer;

  constructor(@Inject(GATEKEEPER_ADMIN_TOKEN) token: string) {
    this.expected = Buffer.from(token);
    this.session = Buffer.from(consoleSession(token));
  }

  canActivate(context: ExecutionContext): boolean {
    return this.allows(context.switchToHttp().getRequest<AdminRequest>());
  }

  /** Whether `given` is the token (the console's sign-in). */
  isToken(given: string): boolean {
    return sameSecret(given, this.expected);
  }

  /** The console session's cookie value (derived from the token). */
  get sessionValue(): string {
    return this.session.toString();
  }

  /** Whether `request` carries the token, or the console's session (and, for a change, its header). */
  allows(request: AdminRequest): boolean {
    const header = request.headers['authorization'];
    const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
    if (match) return sameSecret(match[1].trim(), this.expected);
    const cookie = readCookie(request.headers['cookie'], CONSOLE_SESSION_COOKIE);
    if (cookie === undefined || !sameSecret(cookie, this.session)) return false;
    return request.method === 'GET' || request.method === 'HEAD' || request.headers[CONSOLE_HEADER] === '1';
  }
}

/** One cookie's value from a `Cookie` header. */
function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  for (const part of text?.split(';') ?? []) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return undefined;
}
