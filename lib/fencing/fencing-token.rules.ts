/*
 * What fence() takes as the token of a write, and the checks of its input: pure, no I/O.
 */

/**
 * What `fence()` takes as the token of a write: any lease the library hands out, or a bare token.
 *
 * - a `PermitLease` (a `@ClusterSingleton` run's, `GatekeeperService.acquire()`'s): its permit's `fencingToken`;
 * - a `Permit`: its `fencingToken`;
 * - a `LeaderLease` or a `Leader`: its `epoch`;
 * - a task run's `TaskContext`: the claim's `epoch`;
 * - a `ResourceLease` of an allocation: `epochOf(resource)` of the resource fenced;
 * - a number: a token you carried yourself (from a message, another service).
 *
 * A lease that can tell it lapsed on this node (`assertValid()`, `assertOwned(resource)`) is asked first, so a
 * holder that knows it lost its lease writes nothing.
 */
export type FencingTokenSource =
  | number
  | { readonly fencingToken: number; readonly semaphore?: string }
  | { readonly epoch: number; assertValid?(): void }
  | { readonly permit: { readonly fencingToken: number; readonly semaphore?: string }; assertValid(): void }
  | { epochOf(resource: string): number | undefined; assertOwned(resource: string): void };

/** A source's token for `resource`, or why it has none. */
export type TokenOf = { readonly token: number; readonly check?: () => void } | { readonly problem: string };

/** The token `source` offers for a write to `resource`, and the local check of its lease to run first. */
export function tokenOf(source: FencingTokenSource, resource: string): TokenOf {
  if (typeof source === 'number') return checked(source, 'the token');
  if (typeof source !== 'object' || source === null) return { problem: `must be a lease of this library or a token, got ${String(source)}` };
  if ('epochOf' in source && typeof source.epochOf === 'function') {
    const epoch = source.epochOf(resource);
    if (epoch === undefined) return { problem: `this node does not own "${resource}" in that allocation` };
    return withCheck(checked(epoch, "the resource's epoch"), () => source.assertOwned(resource));
  }
  if ('permit' in source && typeof source.permit === 'object' && source.permit !== null) {
    return withCheck(checked(source.permit.fencingToken, "the permit's fencingToken"), () => source.assertValid());
  }
  if ('fencingToken' in source) return checked(source.fencingToken, 'its fencingToken');
  if ('epoch' in source) {
    const assertValid = 'assertValid' in source && typeof source.assertValid === 'function' ? () => source.assertValid!() : undefined;
    return withCheck(checked(source.epoch, 'its epoch'), assertValid);
  }
  return { problem: 'must be a lease of this library (a permit, a leadership, a task run, an allocation) or a token' };
}

function checked(token: unknown, what: string): TokenOf {
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token < 1) {
    const zero = token === 0 ? ' (0: the lease carries no token, as an allocation in manual mode)' : '';
    const shown = typeof token === 'number' ? String(token) : (JSON.stringify(token) ?? String(token));
    return { problem: `${what} must be a whole number from 1 up, got ${shown}${zero}` };
  }
  return { token };
}

function withCheck(found: TokenOf, check: (() => void) | undefined): TokenOf {
  return 'token' in found && check ? { token: found.token, check } : found;
}

/** The permit `source` is, or leases, for a check of the lease itself (`checkLease`), or why it has none. */
export function permitOf(source: FencingTokenSource): { readonly semaphore: string; readonly fencingToken: number } | { readonly problem: string } {
  const permit = typeof source === 'object' && source !== null ? ('permit' in source ? source.permit : source) : undefined;
  if (permit && 'semaphore' in permit && typeof permit.semaphore === 'string' && 'fencingToken' in permit && typeof permit.fencingToken === 'number') {
    return { semaphore: permit.semaphore, fencingToken: permit.fencingToken };
  }
  return { problem: 'checkLease checks a permit: pass the PermitLease or the Permit the write is made under' };
}

/** A table name `fence()` may put in its SQL: an identifier, optionally schema-qualified (`app.gatekeeper_fences`). */
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** What is wrong with `table` as the fence table's name, or undefined. */
export function tableProblem(table: unknown): string | undefined {
  if (typeof table === 'string' && TABLE.test(table)) return undefined;
  return `must be a table name (letters, digits and _, not starting with a digit, optionally schema.table), got ${JSON.stringify(table) ?? String(table)}`;
}

/** What is wrong with `schema` as the PostgreSQL schema of the library's tables, or undefined. */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) return undefined;
  return `must be a schema name (letters, digits and _, not starting with a digit), got ${JSON.stringify(schema) ?? String(schema)}`;
}

/** The most characters of a fenced resource's name: an index key of MySQL's (191 four-byte characters) holds it. */
export const MAX_RESOURCE_LENGTH = 191;
