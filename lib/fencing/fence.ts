import { parseDuration, type DurationInput } from '../core/duration';
import { FenceTableMissingError } from '../core/errors/fence-table-missing.error';
import { FenceWaitTimeoutError } from '../core/errors/fence-wait-timeout.error';
import type { InvalidInputError } from '../core/errors/invalid-input.error';
import { invalidDefinition } from '../core/errors/input.errors';
import { LeaseLostError } from '../core/errors/lease-lost.error';
import { StaleFencingTokenError } from '../core/errors/stale-fencing-token.error';
import { nameProblem } from '../core/names';
import type { FenceExecutor } from './fence-executor';
import { failTransaction } from '../store/sql-transaction';
import { DEFAULT_FENCE_TABLE, fenceStatements, isLockWaitTimeout, isMissingTable, permitCheckSql, quoted } from './fence-sql';
import { MAX_RESOURCE_LENGTH, permitOf, schemaProblem, tableProblem, tokenOf, type FencingTokenSource } from './fencing-token.rules';

/** Options of {@link fence}. */
export interface FenceOptions {
  /** The fence table (created by your migration, see `fenceTableSql`), optionally `schema.table`. Default: `gatekeeper_fences`. */
  readonly table?: string;
  /**
   * Same-database mode (PostgreSQL): the permits live in this very database (`backend: 'postgres'` on it), so check,
   * in the same transaction and on the database's clock, that the lease's permit is still held (not expired, released
   * or revoked), when the fence runs and again at `COMMIT`: a write cannot commit after its lease ran out, even before
   * anyone else was granted, wherever the holder froze. `true` for the backend's defaults, or its `schema` and
   * `mapPrefix` as the module was given them. The lease must be a `PermitLease` or a `Permit`. A permit no longer held
   * when the fence runs throws `LeaseLostError` and fails the transaction; one no longer held at `COMMIT` fails the
   * `COMMIT` (SQLSTATE `GK001`, the message naming the semaphore, the token and why), which rolls the transaction back.
   * The check at `COMMIT` is the fence table's deferred trigger (`fenceTableSql` creates it): a table without it throws
   * `FenceTableMissingError`. The fence row is written every time in this mode, so one holder's transactions on a
   * resource take turns.
   */
  readonly checkLease?: true | { readonly schema?: string; readonly mapPrefix?: string };
  /**
   * The bound on waiting for another holder's open transaction on the resource (milliseconds or `'10s'`; default
   * 10 s): the fence waits at most 2 × `maxWait` for the fence row (whole seconds on MySQL/MariaDB), then throws
   * `FenceWaitTimeoutError`, its transaction failed (PostgreSQL) or rolled back (MySQL/MariaDB). A newer holder behind
   * an older one frozen between its fence and its `COMMIT` thus gets a clear error rather than a silent hang; with
   * `maxIdle` (PostgreSQL) the frozen one fails instead.
   */
  readonly maxWait?: DurationInput;
  /**
   * PostgreSQL: once fenced, the server ends this transaction if it sits idle this long (its
   * `idle_in_transaction_session_timeout`, for this transaction only). A holder frozen between its fence and its
   * `COMMIT` then commits nothing and frees the fence row: a newer holder waits behind it at most `maxIdle`, and the
   * older is the one that fails. Off unless given; keep it below `maxWait`. node-postgres tells an ended session as an
   * `'error'` event of the client: `pgExecutor` listens on the client it is given, and TypeORM, Knex and Prisma on
   * theirs; with Kysely, Drizzle or MikroORM on node-postgres, give the pool's clients a listener first
   * (`pool.on('connect', (client) => client.on('error', log))`), or the event ends the process.
   */
  readonly maxIdle?: DurationInput;
}

/** The bound on a fence's waits unless told otherwise, in milliseconds (see {@link FenceOptions.maxWait}). */
const DEFAULT_MAX_WAIT_MS = 10_000;

/**
 * The token this process last raised each resource to (by dialect, table and resource), so its next transactions
 * with that token read the fence under a shared lock instead of writing it: one holder's transactions then never wait
 * for each other. At most {@link MOST_RAISED} resources, the oldest forgotten first (a forgotten one is raised again,
 * which is as correct, only exclusive).
 */
const RAISED = new Map<string, number>();
const MOST_RAISED = 4_096;

function remember(key: string, token: number): number {
  RAISED.delete(key);
  RAISED.set(key, token);
  if (RAISED.size > MOST_RAISED) RAISED.delete(RAISED.keys().next().value!);
  return token;
}

/** The backend's defaults (PostgresBackendOptions' `schema` and `mapPrefix`). */
const PERMITS_AT = { schema: 'gatekeeper', mapPrefix: 'gatekeeper' } as const;

/**
 * Fences a write: call it inside the transaction that is about to write to `resource`, before or after your own
 * statements. It records, in the fence table of that database, the lease's token as the highest `resource` has
 * accepted, in your transaction, so it commits with your writes or not at all. If a newer holder already wrote to
 * `resource` (a higher token is recorded), it throws {@link StaleFencingTokenError} and your transaction must roll
 * back: this holder lost its lease while it worked (it froze, was cut off, ran past its lease).
 *
 * Two holders racing: the second's call waits for the first's transaction to end (the fence row is locked until
 * then, as any row your transaction writes), then is refused if its token is lower. So writes commit in token order.
 * Transactions of one holder (one token) do not wait for each other: once this process raised a resource to a token,
 * its next fences with it take the row's lock shared. No lock is held outside your transaction, and never across a run.
 *
 * A lease that can tell it lapsed on this node (`assertValid()`) is asked first: it throws `LeaseLostError` before
 * any statement. Checked before any statement too: `resource` is a name (at most 191 characters), the token a whole
 * number from 1 up, `table` a table name; a bad one throws `InvalidInputError`. A missing table throws
 * {@link FenceTableMissingError}, naming the command that prints its SQL.
 *
 * One resource, one lease: fence a resource with the tokens of one semaphore (or election, task, allocation
 * resource). Tokens of different leases are not in one order, and two permits of a 2-permit semaphore held at once
 * would refuse each other's writes.
 *
 * @param executor - Your transaction, through the adapter of your tool (`pgExecutor(client)`, `typeormExecutor(manager)`, ...).
 * @param resource - What the write changes, as you name it: `invoices`, `invoice:42`, `shard-3`.
 * @param lease - The lease the write is made under, or its token (see {@link FencingTokenSource}).
 * @returns The token recorded.
 *
 * @example Inside a `@ClusterSingleton` run, with TypeORM:
 * ```ts
 * await this.dataSource.transaction(async (manager) => {
 *   await fence(typeormExecutor(manager), 'invoices', currentPermit()!);
 *   await manager.update(Invoice, { status: 'due' }, { status: 'charged' });
 * });
 * ```
 */
export async function fence(executor: FenceExecutor, resource: string, lease: FencingTokenSource, options: FenceOptions = {}): Promise<number> {
  const nameIssue = nameProblem(resource, { max: MAX_RESOURCE_LENGTH });
  if (nameIssue) throw invalidDefinition(undefined, 'resource', nameIssue, 'fence');
  const table = options.table ?? DEFAULT_FENCE_TABLE;
  const tableIssue = tableProblem(table);
  if (tableIssue) throw invalidDefinition(undefined, 'table', tableIssue, 'fence');
  const dialect = executor?.dialect;
  if (dialect !== 'postgres' && dialect !== 'mysql') throw invalidDefinition(undefined, 'executor', `must be a FenceExecutor with a dialect of 'postgres' or 'mysql', got ${JSON.stringify(dialect) ?? String(dialect)}`, 'fence');
  const maxWaitMs = options.maxWait === undefined ? DEFAULT_MAX_WAIT_MS : durationOf(options.maxWait, 'maxWait');
  const maxIdleMs = options.maxIdle === undefined ? undefined : durationOf(options.maxIdle, 'maxIdle');
  if (maxIdleMs !== undefined && dialect !== 'postgres') throw invalidDefinition(undefined, 'maxIdle', 'ends an idle transaction on PostgreSQL: MySQL and MariaDB have no setting for one transaction', 'fence');
  const found = tokenOf(lease, resource);
  if ('problem' in found) throw invalidDefinition(undefined, 'lease', found.problem, 'fence');
  const held = options.checkLease === undefined ? undefined : leaseToCheck(lease, options.checkLease, dialect);
  found.check?.();
  const { token } = found;
  const sql = fenceStatements(dialect, table, Math.ceil((2 * maxWaitMs) / 1000));
  // PostgreSQL's bounds: the fence's lock wait, and how long the transaction may then sit idle (a frozen holder's).
  const bounds = [String(2 * maxWaitMs), maxIdleMs === undefined ? null : String(maxIdleMs)];
  const raisedKey = `${dialect}\u0000${table}\u0000${resource}`;
  const giveUp = async (refused: Error): Promise<never> => {
    // A caller that swallows the error still commits nothing (see failTransaction).
    await failTransaction(executor, refused.message);
    throw refused;
  };
  try {
    if (held) await checkHeld(executor, held, table);
    // Same-database mode always writes the row: the write is what runs the permit's check again at COMMIT.
    if (!held && RAISED.get(raisedKey) === token) {
      // This process raised the resource to this token before: the row most likely holds it already. A shared lock
      // reads it, so the holder's transactions run side by side, and a newer holder's raise waits for them all.
      // Without an idle bound to set (PostgreSQL's maxIdle), a plain statement that skips a row another holder's
      // raise locked (the raise below then waits for it, bounded).
      const [row] = maxIdleMs === undefined
        ? await executor.query(sql.sharedNow, [resource])
        : await executor.query(sql.shared, dialect === 'postgres' ? [resource, ...bounds] : [resource]);
      const highest = row?.token === undefined || row.token === null ? undefined : Number(row.token);
      if (highest === token) return token;
      if (highest !== undefined && highest > token) return await giveUp(new StaleFencingTokenError(resource, token, highest));
      // Lower or absent: the transaction that raised it rolled back. Raised again, as the first time.
    }
    const raised = await executor.query(sql.raise, dialect === 'postgres' ? [resource, token, ...bounds] : [resource, token]);
    if (dialect === 'postgres' && raised.length > 0) return remember(raisedKey, token);
    const [row] = await executor.query(sql.highest, [resource]);
    const highest = Number(row?.token);
    if (dialect === 'mysql' && highest <= token) return remember(raisedKey, token);
    return await giveUp(new StaleFencingTokenError(resource, token, highest));
  } catch (error) {
    if (error instanceof StaleFencingTokenError || error instanceof LeaseLostError || error instanceof FenceTableMissingError) throw error;
    if (isMissingTable(error)) throw new FenceTableMissingError(table, dialect, { cause: error });
    if (isLockWaitTimeout(error)) return await giveUp(new FenceWaitTimeoutError(resource, token, 2 * maxWaitMs, dialect, { cause: error }));
    throw error;
  }
}

function durationOf(value: DurationInput, field: 'maxWait' | 'maxIdle'): number {
  try {
    return parseDuration(value, undefined, field);
  } catch (error) {
    throw invalidDefinition(undefined, field, (error as InvalidInputError).reason ?? String(error), 'fence');
  }
}

/** The permit a same-database check reads, and where: checked before any statement. */
interface HeldCheck {
  readonly schema: string;
  readonly map: string;
  readonly semaphore: string;
  readonly token: number;
}

function leaseToCheck(lease: FencingTokenSource, given: NonNullable<FenceOptions['checkLease']>, dialect: FenceExecutor['dialect']): HeldCheck {
  if (dialect !== 'postgres') throw invalidDefinition(undefined, 'checkLease', 'checks a permit kept in this PostgreSQL database: a MySQL database holds no permits', 'fence');
  const at = { ...PERMITS_AT, ...(given === true ? {} : given) };
  const schemaIssue = schemaProblem(at.schema);
  if (schemaIssue) throw invalidDefinition(undefined, 'checkLease.schema', schemaIssue, 'fence');
  const prefixIssue = nameProblem(at.mapPrefix);
  if (prefixIssue) throw invalidDefinition(undefined, 'checkLease.mapPrefix', prefixIssue, 'fence');
  const permit = permitOf(lease);
  if ('problem' in permit) throw invalidDefinition(undefined, 'lease', permit.problem, 'fence');
  return { schema: at.schema, map: `${at.mapPrefix}.semaphores`, semaphore: permit.semaphore, token: permit.fencingToken };
}

/**
 * Throws LeaseLostError, the transaction failed, unless the permit is held now on the database's clock; registers the
 * same check for the transaction's `COMMIT` (the fence table's deferred trigger runs it, so a holder frozen anywhere
 * after this commits nothing once its permit is over). A fence table without that trigger is refused.
 */
async function checkHeld(executor: FenceExecutor, check: HeldCheck, table: string): Promise<void> {
  const [row] = await executor.query(permitCheckSql(check.schema), [check.map, check.semaphore, check.token, quoted('postgres', table)]);
  const reason = row?.reason === null || row?.reason === undefined ? undefined : String(row.reason);
  if (reason !== undefined) {
    const lost = new LeaseLostError('permit', check.semaphore, reason, `Permit of "${check.semaphore}" is lost: ${reason}; the fenced write was refused`);
    await failTransaction(executor, lost.message);
    throw lost;
  }
  if (row?.guarded !== true) {
    const missing = new FenceTableMissingError(table, 'postgres', { commitCheck: true });
    await failTransaction(executor, missing.message);
    throw missing;
  }
}
