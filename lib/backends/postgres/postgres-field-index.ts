import type { PostgresCalls } from './postgres-calls';
import { ident } from './postgres-sql';
import { invalidOption } from '../../core/errors/input.errors';

/**
 * Makes the index of `doc -> field` that a record map's `findBy(field)` reads, in `schema`'s `records` table: once
 * per field (several nodes may race: the loser finds it made).
 */
export async function ensureFieldIndex(calls: PostgresCalls, schema: string, field: string): Promise<void> {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(field)) throw invalidOption('indexes', `a field to find records by must be a plain name, got ${JSON.stringify(field)}`);
  const name = `records_by_${field}`;
  // CREATE INDEX IF NOT EXISTS takes its table lock before it looks, and would queue every write behind a VACUUM:
  // look first, so only the very first open of a database creates it.
  const found = await calls.query('SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2', [schema, name], `look up index ${field}`);
  if (found.rows.length > 0) return;
  const sql = `CREATE INDEX IF NOT EXISTS ${ident(name)} ON ${ident(schema)}.records (map, (doc -> ${`'${field}'`})) WHERE doc IS NOT NULL`;
  await calls.query(sql, [], `index ${field}`).catch((error: unknown) => {
    // Two nodes creating the same index at once: one gets a duplicate-name error, and the index is there.
    const code = ((error as { cause?: { code?: unknown } }).cause)?.code;
    if (code !== '23505' && code !== '42P07') throw error;
  });
}
