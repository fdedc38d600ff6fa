import { applyDecorators, BadRequestException, CanActivate, ConflictException, createParamDecorator, Injectable, SetMetadata, UseGuards, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FENCING_TOKEN_HEADER, tokenInHeader } from '../../fencing/http/fencing-header';
import { nameProblem } from '../../core/names';
import { MAX_RESOURCE_LENGTH } from '../../fencing/fencing-token.rules';
import { invalidDecorator } from '../errors/decorator.errors';
import { HttpFences } from './http-fences';

const FENCED_METADATA = 'gatekeeper:fenced';
/** Where the guard leaves the accepted token on the request. */
const TOKEN_ON_REQUEST = Symbol('gatekeeper:fencing-token');

interface FencedRequest {
  headers: Record<string, string | string[] | undefined>;
  [TOKEN_ON_REQUEST]?: number;
}

/** Refuses a fenced route's call whose token is missing, malformed (400) or older than one already accepted (409). */
@Injectable()
export class FencedGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly fences: HttpFences,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const resource = this.reflector.get<string>(FENCED_METADATA, context.getHandler());
    const request = context.switchToHttp().getRequest<FencedRequest>();
    const header = tokenInHeader(request.headers[FENCING_TOKEN_HEADER]);
    if ('problem' in header) throw new BadRequestException({ statusCode: 400, error: 'FencingTokenMissing', message: `A fenced call to "${resource}": ${header.problem}`, resource });
    const verdict = await this.fences.accept(resource, header.token);
    if (!verdict.accepted) {
      throw new ConflictException({
        statusCode: 409, error: 'StaleFencingToken', resource, token: header.token, newer: verdict.newer,
        message: `Fenced call to "${resource}" refused: token ${header.token} is stale, the resource already accepted token ${verdict.newer} from a newer holder`,
      });
    }
    request[TOKEN_ON_REQUEST] = header.token;
    return true;
  }
}

/**
 * Fences an HTTP route: a call must carry the caller's lease token (`gatekeeper-fencing-token`, sent by
 * `fencingHeaders(lease)` or `fencedFetch(lease)` of `nestjs-gatekeeper/fencing`), and one whose token is older than
 * one the route's `resource` already accepted is refused with 409 and a body naming the resource and both tokens,
 * before the handler runs. This service keeps the highest token per resource in its own backend (`GatekeeperModule`'s),
 * so every instance of it refuses alike. A call without the header, or with a malformed one, is refused with 400.
 *
 * The check is at the call's arrival: a call accepted before a newer holder's may still finish after it. Where that
 * matters, pass the token on to `fence()` in the handler's own transaction ({@link FencingToken}).
 *
 * @param resource - What the route changes, as the callers' leases guard it (`ledger`, `invoices`).
 */
export function Fenced(resource: string): MethodDecorator {
  const problem = nameProblem(resource, { max: MAX_RESOURCE_LENGTH });
  if (problem) throw invalidDecorator(`@Fenced(${JSON.stringify(resource) ?? String(resource)})`, problem, 'resource');
  return applyDecorators(SetMetadata(FENCED_METADATA, resource), UseGuards(FencedGuard));
}

/** The fencing token a `@Fenced` route accepted for this call, as a handler's parameter (for `fence()` downstream). */
export const FencingToken = createParamDecorator((_data: unknown, context: ExecutionContext): number | undefined => context.switchToHttp().getRequest<FencedRequest>()[TOKEN_ON_REQUEST]);
