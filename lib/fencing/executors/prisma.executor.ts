import type { FenceDialect, FenceExecutor } from '../fence-executor';
import { notATransaction, rowsOf } from './executor-input';

/** What `prismaExecutor` needs of Prisma: the client of an interactive transaction. */
export interface PrismaQueryable {
  /** Runs a query that returns rows, with `$1` (PostgreSQL) or `?` (MySQL) parameters. */
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
  /** Runs a statement that returns none. */
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
}

/** A statement that answers rows: a `SELECT` or `WITH` (after any leading comments), or one with `RETURNING`. */
const ANSWERS_ROWS = /^\s*(?:\/\*[\s\S]*?\*\/\s*)*(?:select|with)\b|\breturning\b/i;

/**
 * `fence()` on Prisma: pass the client of an interactive transaction (`prisma.$transaction(async (tx) => ...)`), and
 * the dialect of its database (`postgres`, the default, or `mysql` for MySQL and MariaDB). The fence table is a
 * model of your schema (see the Fenced writes page) or a table your migration creates.
 *
 * @example
 * ```ts
 * await prisma.$transaction(async (tx) => {
 *   await fence(prismaExecutor(tx), 'invoices', lease);
 *   await tx.invoice.updateMany({ where: { status: 'due' }, data: { status: 'charged' } });
 * });
 * ```
 */
export function prismaExecutor(tx: PrismaQueryable, dialect: FenceDialect = 'postgres'): FenceExecutor {
  const what = 'prismaExecutor(tx)';
  if (!tx || typeof tx.$queryRawUnsafe !== 'function') throw notATransaction(what, 'must be the client of an interactive Prisma transaction (the tx of prisma.$transaction(async (tx) => ...))');
  // The root client has $connect; a transaction's client does not (Prisma leaves it out there).
  if (typeof (tx as { $connect?: unknown }).$connect === 'function') {
    throw notATransaction(what, 'got the PrismaClient itself, which runs each query on its own: pass the tx that prisma.$transaction(async (tx) => ...) gives your callback');
  }
  return {
    dialect,
    // Statements that return rows through $queryRawUnsafe, the rest through $executeRawUnsafe (MySQL's upsert).
    query: async (sql, params) => (ANSWERS_ROWS.test(sql) ? rowsOf(await tx.$queryRawUnsafe(sql, ...params)) : (await tx.$executeRawUnsafe(sql, ...params), [])),
  };
}
