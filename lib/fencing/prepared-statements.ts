import { createHash } from 'node:crypto';

/**
 * The fence's own statements, which an executor that can may run as prepared statements of its connection (parsed
 * and planned once per connection, not at every fence): `pgExecutor` runs them as node-postgres named statements.
 * Only the library's fixed texts are here (one set per fence table and permits schema), so a connection prepares a
 * handful at most; anything else an executor runs is sent as it is.
 *
 * A name is made from its text alone (`gatekeeper_fence_` and a hash of it), the same in every process: on a server
 * connection that a pooler hands to several clients, a name another client prepared is the same statement or none,
 * never another one.
 */
const NAMES = new Map<string, string>();

/** How many texts are kept at most: past it, a new one is simply not prepared (a program with that many fence tables is not expected). */
const MOST = 256;

/** The prefix of every name {@link preparedName} gives. */
export const PREPARED_PREFIX = 'gatekeeper_fence_';

/** Marks `sql` as one of the fence's statements and returns it. */
export function preparable(sql: string): string {
  if (!NAMES.has(sql) && NAMES.size < MOST) NAMES.set(sql, PREPARED_PREFIX + createHash('sha256').update(sql).digest('hex').slice(0, 32));
  return sql;
}

/** The name `sql` is prepared under on a connection, or undefined for a statement that is not the fence's own. */
export function preparedName(sql: string): string | undefined {
  return NAMES.get(sql);
}
