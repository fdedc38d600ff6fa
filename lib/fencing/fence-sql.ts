import type { FenceDialect } from './fence-executor';

/** The fence table's name unless told otherwise. */
export const DEFAULT_FENCE_TABLE = 'gatekeeper_fences';

/** `table` quoted as the dialect quotes identifiers (each part of `schema.table`); it was checked to be one. */
function quoted(dialect: FenceDialect, table: string): string {
  const q = dialect === 'postgres' ? '"' : '`';
  return table.split('.').map((part) => `${q}${part}${q}`).join('.');
}

/**
 * The migration that creates the fence table: one row per resource, the highest token it accepted and when. What
 * `npx nestjs-gatekeeper fencing sql` prints; run it in a migration of yours.
 */
export function fenceTableSql(dialect: FenceDialect, table = DEFAULT_FENCE_TABLE): string {
  const t = quoted(dialect, table);
  if (dialect === 'postgres') {
    return [
      `-- The fence table of nestjs-gatekeeper: per resource, the highest fencing token a write was accepted with.`,
      `CREATE TABLE IF NOT EXISTS ${t} (`,
      `  resource text PRIMARY KEY,`,
      `  token bigint NOT NULL,`,
      `  fenced_at timestamptz NOT NULL DEFAULT now()`,
      `);`,
      '',
    ].join('\n');
  }
  return [
    `-- The fence table of nestjs-gatekeeper: per resource, the highest fencing token a write was accepted with.`,
    `CREATE TABLE IF NOT EXISTS ${t} (`,
    `  resource VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,`,
    `  token BIGINT NOT NULL,`,
    `  fenced_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)`,
    `) ENGINE=InnoDB;`,
    '',
  ].join('\n');
}

/**
 * The fence's statements for one dialect and table:
 *
 * - `raise`: records the token as the resource's highest unless a higher one is there (an equal one is the same
 *   holder writing again). PostgreSQL answers a row when it was recorded; MySQL answers none and `highest` tells.
 * - `highest`: the highest token the resource accepted, read as committed now (a locking read on MySQL, whose plain
 *   reads see the transaction's snapshot).
 * - `shared`: the same under a shared lock of the row until the transaction ends: transactions of one holder (one
 *   token) hold it together, and a newer holder's raise waits until they all ended.
 * - `fail` (PostgreSQL): a statement that fails, so the transaction can no longer commit (a `COMMIT` rolls it back).
 */
export function fenceStatements(dialect: FenceDialect, table: string): { raise: string; highest: string; shared: string; fail?: string } {
  const t = quoted(dialect, table);
  if (dialect === 'postgres') {
    return {
      raise:
        `INSERT INTO ${t} AS f (resource, token) VALUES ($1, $2) ` +
        `ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, fenced_at = now() WHERE f.token <= EXCLUDED.token RETURNING f.token`,
      highest: `SELECT token FROM ${t} WHERE resource = $1`,
      shared: `SELECT token FROM ${t} WHERE resource = $1 FOR SHARE`,
      fail: `SELECT CAST($1::text AS integer)`,
    };
  }
  return {
    // MySQL sets columns left to right, each seeing those set before it: fenced_at reads the old token.
    raise:
      `INSERT INTO ${t} (resource, token) VALUES (?, ?) ` +
      `ON DUPLICATE KEY UPDATE fenced_at = IF(token <= VALUES(token), CURRENT_TIMESTAMP(3), fenced_at), token = GREATEST(token, VALUES(token))`,
    highest: `SELECT token FROM ${t} WHERE resource = ? FOR UPDATE`,
    shared: `SELECT token FROM ${t} WHERE resource = ? LOCK IN SHARE MODE`,
  };
}

/** Whether `error`, from a tool running the fence's SQL, says the table does not exist (its own or a driver's underneath). */
export function isMissingTable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const o = e as { code?: unknown; errno?: unknown; meta?: { code?: unknown }; message?: unknown };
    // PostgreSQL's undefined_table, MySQL's ER_NO_SUCH_TABLE (Prisma keeps the database's code in meta.code).
    if (o.code === '42P01' || o.code === 'ER_NO_SUCH_TABLE' || o.errno === 1146 || o.meta?.code === '42P01' || o.meta?.code === '1146') return true;
    if (typeof o.message === 'string' && /relation "[^"]*" does not exist|Table '[^']*' doesn't exist/.test(o.message)) return true;
    e = (e as { driverError?: unknown; cause?: unknown }).driverError ?? (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether the permit with `fencingToken` of semaphore `key` in the record map `map` is held now by the database's
 * clock (`clock_timestamp()`): in the library's own table of a PostgreSQL backend in this database (`schema`), a
 * permit not released, not revoked, and not expired. Parameters: the map (`<mapPrefix>.semaphores`), the semaphore, the
 * token. Answers one row, `held`, and `left_ms`: how long it has left (negative: how long ago it ran out).
 */
export function leaseHeldSql(schema: string): string {
  return (
    `SELECT bool_or(p.value ->> 'released' IS DISTINCT FROM 'true' AND p.value ->> 'revokedAt' IS NULL AND (p.value ->> 'expiresAt')::double precision > extract(epoch from clock_timestamp()) * 1000) AS held, ` +
    `max((p.value ->> 'expiresAt')::double precision - extract(epoch from clock_timestamp()) * 1000) AS left_ms ` +
    `FROM "${schema}".records r CROSS JOIN LATERAL jsonb_array_elements(r.value::jsonb -> 'permits') AS p(value) ` +
    `WHERE r.map = $1 AND r.key = $2 AND (p.value ->> 'fencingToken')::bigint = $3::bigint`
  );
}
