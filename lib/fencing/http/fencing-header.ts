import { invalidDefinition } from '../../core/errors/input.errors';
import { tokenOf, type FencingTokenSource } from '../fencing-token.rules';

/** The header a fenced HTTP call carries its lease's token in. */
export const FENCING_TOKEN_HEADER = 'gatekeeper-fencing-token';

/**
 * The headers that make an HTTP call fenced: the lease's token in `gatekeeper-fencing-token`, for a route of another
 * service under `@Fenced(resource)`, which refuses a call whose token is older than one it already accepted. A lease
 * that can tell it lapsed on this node is asked first (throws `LeaseLostError`): a holder that knows it lost its
 * lease sends nothing.
 *
 * @param lease - The lease the call is made under, or its token (see `fence()`).
 * @param resource - The resource an allocation's `ResourceLease` owns (its epoch is the token); ignored otherwise.
 *
 * @example With `@nestjs/axios`:
 * ```ts
 * await firstValueFrom(this.http.post(url, body, { headers: fencingHeaders(lease) }));
 * ```
 */
export function fencingHeaders(lease: FencingTokenSource, resource = ''): Record<string, string> {
  const found = tokenOf(lease, resource);
  if ('problem' in found) throw invalidDefinition(undefined, 'lease', found.problem, 'fencingHeaders');
  found.check?.();
  return { [FENCING_TOKEN_HEADER]: String(found.token) };
}

/**
 * `fetch` with the lease's token on every call (see {@link fencingHeaders}); the lease is asked again at each call.
 *
 * @example
 * ```ts
 * const call = fencedFetch(lease);
 * const answer = await call('http://ledger:3000/entries', { method: 'POST', body: JSON.stringify(entry) });
 * if (answer.status === 409) lease.assertValid(); // another holder's call won: stop
 * ```
 */
export function fencedFetch(lease: FencingTokenSource, resource = '', fetchImpl: typeof fetch = fetch): typeof fetch {
  // Async: a lease that lapsed rejects the call's promise, as a failed fetch does.
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(fencingHeaders(lease, resource))) headers.set(name, value);
    return fetchImpl(input, { ...init, headers });
  };
}

/** The token a fenced call's header carries: a whole number from 1 up, or what is wrong with it. */
export function tokenInHeader(value: string | string[] | undefined): { readonly token: number } | { readonly problem: string } {
  if (value === undefined) return { problem: `the call carries no ${FENCING_TOKEN_HEADER} header (send it with fencingHeaders(lease) or fencedFetch(lease))` };
  const text = Array.isArray(value) ? value[0] : value;
  const token = /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(token) || token < 1) return { problem: `its ${FENCING_TOKEN_HEADER} header must be a whole number from 1 up, got ${JSON.stringify(text)}` };
  return { token };
}
