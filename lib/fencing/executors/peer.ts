import { createRequire } from 'node:module';
import { notATransaction } from './executor-input';

/** An optional peer (`kysely`, `drizzle-orm`), loaded when its executor is first used: a clear error when it is missing. */
export function peer<T>(name: string, executor: string): T {
  try {
    return createRequire(__filename)(name) as T;
  } catch (error) {
    throw notATransaction(executor, `needs the ${name} package, which could not be loaded: ${(error as Error).message}`);
  }
}

/**
 * `sql`'s text split at its placeholders (`$1`, `$2`, ... or `?`), with the parameter each stands for: for tools
 * that take a query as a template (Drizzle's `sql`).
 */
export function templateOf(sql: string, params: readonly unknown[]): { strings: string[]; values: unknown[] } {
  const strings: string[] = [];
  const values: unknown[] = [];
  let last = 0;
  let next = 0;
  for (const match of sql.matchAll(/\$(\d+)|\?/g)) {
    strings.push(sql.slice(last, match.index));
    values.push(match[1] === undefined ? params[next++] : params[Number(match[1]) - 1]);
    last = match.index! + match[0].length;
  }
  strings.push(sql.slice(last));
  return { strings, values };
}
