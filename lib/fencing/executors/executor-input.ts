import { invalidDefinition } from '../../core/errors/input.errors';
import type { InvalidInputError } from '../../core/errors/invalid-input.error';
import type { FenceDialect } from '../fence-executor';

/** A wrong argument to one of the executors (`pgExecutor(...)`): names the executor and says what to pass. */
export function notATransaction(executor: string, reason: string): InvalidInputError {
  return invalidDefinition(undefined, executor, reason, 'fence');
}

/** The dialect a tool names its database by (`postgres`, `postgresql`, `pg`, `mysql`, `mysql2`, `mariadb`), or undefined. */
export function dialectNamed(name: unknown): FenceDialect | undefined {
  if (typeof name !== 'string') return undefined;
  if (/^(pg|postgres|postgresql|cockroachdb)$/i.test(name) || /postgres/i.test(name)) return 'postgres';
  if (/^(mysql|mysql2|mariadb)$/i.test(name) || /mysql|mariadb/i.test(name)) return 'mysql';
  return undefined;
}

/**
 * The rows of a tool's answer: an array of rows, `{ rows }`, mysql2's `[rows, fields]` (a write's header: none), or
 * TypeORM's `[rows, count]` for a PostgreSQL `UPDATE` or `DELETE` (its `RETURNING` rows).
 */
export function rowsOf(answer: unknown): ReadonlyArray<Record<string, unknown>> {
  if (Array.isArray(answer)) {
    // TypeORM on PostgreSQL: an UPDATE's or DELETE's rows and how many it changed (a row is never an array).
    if (answer.length === 2 && Array.isArray(answer[0]) && typeof answer[1] === 'number') return answer[0] as Array<Record<string, unknown>>;
    // mysql2: [rows | ResultSetHeader, fields]
    if (answer.length === 2 && (Array.isArray(answer[0]) || isHeader(answer[0])) && (answer[1] === undefined || Array.isArray(answer[1]))) {
      return Array.isArray(answer[0]) ? answer[0] : [];
    }
    return answer as Array<Record<string, unknown>>;
  }
  if (answer && typeof answer === 'object' && Array.isArray((answer as { rows?: unknown }).rows)) return (answer as { rows: Array<Record<string, unknown>> }).rows;
  return [];
}

function isHeader(value: unknown): boolean {
  return !!value && typeof value === 'object' && 'affectedRows' in value;
}

/** PostgreSQL's placeholders `$1`, `$2`, ... as `?` (tools that bind `?` in every dialect: Knex, MikroORM). */
export function questionMarks(sql: string): string {
  return sql.replace(/\$\d+/g, '?');
}
