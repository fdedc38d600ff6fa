import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';

/** Injection token of the admin API's shared secret. */
export const GATEKEEPER_ADMIN_TOKEN = Symbol('gatekeeper:admin_token');

/** Lets a request through only with `Authorization: Bearer <token>`, compared in constant time. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(GATEKEEPER_ADMIN_TOKEN) token: string) {
    this.expected = Buffer.from(token);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const header = request.headers['authorization'];
    const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
    if (!match) return false;
    const given = Buffer.from(match[1].trim());
    return given.length === this.expected.length && timingSafeEqual(given, this.expected);
  }
}
