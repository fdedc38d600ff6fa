import type { FenceDialect } from './fence-executor';
import { preparable } from './prepared-statements';

/** The fence table's name unless told otherwise. */
export const DEFAULT_FENCE_TABLE = 'gatekeeper_fences';

/** `table` quoted as the dialect quotes identifiers (each part of `schema.table`); it was checked to be one. */
export function quoted(dialect: FenceDialect, table: string): string {
  const q = dialect === 'postgres' ? '"' : '`';
  return table.split('.').map((part) => `${q}${part}${q}`).join('.');
}

/** The transaction-local setting that lists what same-database mode checks again at `COMMIT`: by permit, its query. */
export const COMMIT_CHECKS = 'nestjs_gatekeeper.fence_checks';

/** The deferred trigger on the fence table (PostgreSQL) that runs {@link COMMIT_CHECKS} at `COMMIT`, and its function. */
export const COMMIT_CHECK = 'gatekeeper_fence_commit_check';

/** The SQLSTATE a `COMMIT` fails with when a permit fenced in same-database mode is no longer held then. */
export const LEASE_LOST_AT_COMMIT = 'GK001';

/** The schema part of `schema.table`, quoted with a dot after it, or nothing. */
function schemaOf(dialect: FenceDialect, table: string): string {
  const dot = table.lastIndexOf('.');
  return dot < 0 ? '' : `${quoted(dialect, table.slice(0, dot))}.`;
}

/**
 * The migration that creates the fence table: one row per resource, the highest token it accepted and when. What
 * `npx nestjs-gatekeeper fencing sql` prints; run it in a migration of yours. On PostgreSQL it also creates the check
 * same-database mode makes at `COMMIT`: a deferred constraint trigger on the table that runs, as the transaction
 * commits, the permit checks `fence()` registered in it (none unless `checkLease` was asked), and fails the `COMMIT`
 * (SQLSTATE `GK001`) when a permit is no longer held. Running it again changes nothing.
 */
export function fenceTableSql(dialect: FenceDialect, table = DEFAULT_FENCE_TABLE): string {
  const t = quoted(dialect, table);
  if (dialect === 'postgres') {
    const check = `${schemaOf(dialect, table)}${COMMIT_CHECK}`;
    return [
      `-- The fence table of nestjs-gatekeeper: per resource, the highest fencing token a write was accepted with.`,
      `CREATE TABLE IF NOT EXISTS ${t} (`,
      `  resource text PRIMARY KEY,`,
      `  token bigint NOT NULL,`,
      `  fenced_at timestamptz NOT NULL DEFAULT now()`,
      `);`,
      `-- Same-database mode's check at COMMIT: the permits fence(..., { checkLease }) saw held must still be held.`,
      `CREATE OR REPLACE FUNCTION ${check}() RETURNS trigger LANGUAGE plpgsql AS $$`,
      `DECLARE`,
      `  pending text;`,
      `  refusal text;`,
      `BEGIN`,
      `  FOR pending IN SELECT value FROM jsonb_each_text(current_setting('${COMMIT_CHECKS}', true)::jsonb) LOOP`,
      `    EXECUTE pending INTO refusal;`,
      `    IF refusal IS NOT NULL THEN`,
      `      RAISE EXCEPTION USING ERRCODE = '${LEASE_LOST_AT_COMMIT}', MESSAGE = refusal;`,
      `    END IF;`,
      `  END LOOP;`,
      `  RETURN NULL;`,
      `END $$;`,
      `DO $$ BEGIN`,
      `  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${t.replace(/'/g, "''")}'::regclass AND tgname = '${COMMIT_CHECK}') THEN`,
      `    CREATE CONSTRAINT TRIGGER ${COMMIT_CHECK} AFTER INSERT OR UPDATE ON ${t} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW`,
      `      WHEN (current_setting('${COMMIT_CHECKS}', true) > '') EXECUTE FUNCTION ${check}();`,
      `  END IF;`,
      `  -- It fires whatever session_replication_role says.`,
      `  ALTER TABLE ${t} ENABLE ALWAYS TRIGGER ${COMMIT_CHECK};`,
      `END $$;`,
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

/** The fence's statements for one dialect, table and wait; see {@link fenceStatements}. */
export interface FenceStatements {
  readonly raise: string;
  readonly highest: string;
  readonly shared: string;
  /** `shared` without waiting, so with no bound to set: a row another holder's raise locked is not read. */
  readonly sharedNow: string;
}

/**
 * PostgreSQL: the head of a statement that bounds its own lock wait and what follows it, after `args` (its values,
 * each placeholder once and in order: Knex and MikroORM bind `?` by position). `was` keeps the transaction's
 * `lock_timeout`; `bound` sets it to the wait (`args.waits`) for this statement, and, when given,
 * `idle_in_transaction_session_timeout` to the idle bound (`args.idles`) for the rest of the transaction: a holder
 * frozen after its fence has its transaction ended by the server, so whoever waits behind it waits that long at most.
 * The statement restores `lock_timeout` from `was`.
 */
const boundedPg = (args: string) =>
  `WITH args AS (SELECT ${args}), was AS (SELECT current_setting('lock_timeout') AS setting), ` +
  `bound AS (SELECT a.*, set_config('lock_timeout', a.waits, true) AS waited, CASE WHEN a.idles IS NOT NULL THEN set_config('idle_in_transaction_session_timeout', a.idles, true) END AS idled FROM args a, was) `;

const STATEMENTS = new Map<string, FenceStatements>();

/**
 * The fence's statements for one dialect and table, waiting at most `waitSeconds` (MySQL; PostgreSQL takes its
 * bounds as values):
 *
 * - `raise`: records the token as the resource's highest unless a higher one is there (an equal one is the same
 *   holder writing again). PostgreSQL answers a row when it was recorded; MySQL answers none and `highest` tells.
 *   PostgreSQL's values: resource, token, the lock wait and the idle bound (ms).
 * - `highest`: the highest token the resource accepted, read as committed now (a locking read on MySQL, whose plain
 *   reads see the transaction's snapshot).
 * - `shared`: the same under a shared lock of the row until the transaction ends: transactions of one holder (one
 *   token) hold it together, and a newer holder's raise waits until they all ended. PostgreSQL's values: resource,
 *   the lock wait and the idle bound; it answers one row, its token null when the resource has none.
 * - `sharedNow`: the same, skipping a row another transaction holds exclusively rather than waiting for it (no
 *   bound to set, so one plain statement: on MariaDB from 10.6, whose SKIP LOCKED it is; MySQL 8, whose SKIP LOCKED
 *   needs another syntax, waits as in `shared`, bounded by its hint); no row then sends the fence on to `raise`,
 *   which waits, bounded.
 *
 * A wait past its bound fails the statement: PostgreSQL's `lock_timeout` (55P03), InnoDB's lock wait timeout (1205),
 * set for the statement alone (MariaDB's `SET STATEMENT`, MySQL's `SET_VAR` hint; each ignores the other's).
 */
export function fenceStatements(dialect: FenceDialect, table: string, waitSeconds = 0): FenceStatements {
  const key = `${dialect}\u0000${table}\u0000${dialect === 'mysql' ? waitSeconds : ''}`;
  const known = STATEMENTS.get(key);
  if (known) return known;
  const made = dialect === 'postgres' ? pgStatements(quoted(dialect, table)) : mysqlStatements(quoted(dialect, table), waitSeconds);
  STATEMENTS.set(key, made);
  return made;
}

function pgStatements(t: string): FenceStatements {
  const statements: FenceStatements = {
    raise:
      boundedPg(`$1::text AS resource, $2::bigint AS token, $3::text AS waits, $4::text AS idles`) +
      `INSERT INTO ${t} AS f (resource, token) SELECT resource, token FROM bound ` +
      `ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, fenced_at = now() WHERE f.token <= EXCLUDED.token ` +
      `RETURNING f.token, set_config('lock_timeout', (SELECT setting FROM was), true) AS restored`,
    highest: `SELECT token FROM ${t} WHERE resource = $1`,
    shared:
      boundedPg(`$1::text AS resource, $2::text AS waits, $3::text AS idles`) +
      `, locked AS (SELECT f.token FROM bound b, ${t} f WHERE f.resource = b.resource FOR SHARE OF f) ` +
      `SELECT locked.token, set_config('lock_timeout', was.setting, true) AS restored FROM was LEFT JOIN locked ON true`,
    sharedNow: `SELECT token FROM ${t} WHERE resource = $1 FOR SHARE SKIP LOCKED`,
  };
  for (const sql of Object.values(statements)) preparable(sql);
  return statements;
}

function mysqlStatements(t: string, waitSeconds: number): FenceStatements {
  // MariaDB runs what its executable comment holds; MySQL 8 takes the hint. A wait of 0 keeps the session's.
  const bounded = (verb: string) => waitSeconds > 0
    ? `/*M!100300 SET STATEMENT innodb_lock_wait_timeout=${waitSeconds} FOR */ ${verb} /*+ SET_VAR(innodb_lock_wait_timeout=${waitSeconds}) */`
    : verb;
  return {
    // MySQL sets columns left to right, each seeing those set before it: fenced_at reads the old token.
    raise:
      `${bounded('INSERT')} INTO ${t} (resource, token) VALUES (?, ?) ` +
      `ON DUPLICATE KEY UPDATE fenced_at = IF(token <= VALUES(token), CURRENT_TIMESTAMP(3), fenced_at), token = GREATEST(token, VALUES(token))`,
    highest: `SELECT token FROM ${t} WHERE resource = ? FOR UPDATE`,
    shared: `${bounded('SELECT')} token FROM ${t} WHERE resource = ? LOCK IN SHARE MODE`,
    // MariaDB's SET STATEMENT costs about 7 µs a fence, more than the shared lock; skipping a locked row, the read has
    // no wait to bound.
    sharedNow:
      `SELECT${waitSeconds > 0 ? ` /*+ SET_VAR(innodb_lock_wait_timeout=${waitSeconds}) */` : ''} token FROM ${t} WHERE resource = ? ` +
      `LOCK IN SHARE MODE /*M!100600 SKIP LOCKED */`,
  };
}

/** Whether `error`, from a tool running the fence's SQL, says a lock wait ran past its bound (PostgreSQL's lock_timeout, InnoDB's). */
export function isLockWaitTimeout(error: unknown): boolean {
  return someCause(error, (o) => o.code === '55P03' || o.code === 'ER_LOCK_WAIT_TIMEOUT' || o.errno === 1205 || o.meta?.code === '55P03' || o.meta?.code === '1205' || (typeof o.message === 'string' && /lock timeout|Lock wait timeout exceeded/.test(o.message)));
}

/** What a database error says of itself, as drivers and ORMs carry it. */
interface ErrorFields {
  code?: unknown;
  errno?: unknown;
  meta?: { code?: unknown };
  message?: unknown;
}

/** Whether `error` or one of the errors under it (an ORM's driver error, a cause), five deep at most, is `wanted`. */
function someCause(error: unknown, wanted: (e: ErrorFields) => boolean): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (wanted(e as ErrorFields)) return true;
    e = (e as { driverError?: unknown; cause?: unknown }).driverError ?? (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether `error`, from a tool running the fence's SQL, says the table does not exist (its own or a driver's underneath). */
export function isMissingTable(error: unknown): boolean {
  // PostgreSQL's undefined_table, MySQL's ER_NO_SUCH_TABLE (Prisma keeps the database's code in meta.code).
  return someCause(error, (o) => o.code === '42P01' || o.code === 'ER_NO_SUCH_TABLE' || o.errno === 1146 || o.meta?.code === '42P01' || o.meta?.code === '1146' ||
    (typeof o.message === 'string' && /relation "[^"]*" does not exist|Table '[^']*' doesn't exist/.test(o.message)));
}

/** The values of a permit check, by placeholder (each once, in order): the map, the semaphore, the token. */
const PERMIT_ARGS = `SELECT $1::text AS map, $2::text AS key, $3::bigint AS token`;

/**
 * Why the permit with `token` of semaphore `key` in the record map `map` (the columns of `args`, a query of one row)
 * is not held now by the database's clock (`clock_timestamp()`), or null when it is: in the library's own table of a
 * PostgreSQL backend in this database (`schema`), a permit not released, not revoked, and not expired. Answers one row:
 * `reason`, `left_ms` (how long the permit has left; negative: how long ago it ran out; null: no such permit) and `key`.
 * By default its values are the map, the semaphore and the token. The record is read under a key-share lock, which
 * the library's updates do not wait for: under `REPEATABLE READ` or `SERIALIZABLE` a record changed since the
 * transaction's snapshot then fails the statement (40001) rather than being judged as the snapshot has it.
 */
export function permitLossSql(schema: string, args = PERMIT_ARGS): string {
  return (
    `SELECT CASE WHEN h.held THEN NULL ` +
    `WHEN h.left_ms IS NULL THEN 'the database holds no permit of it with token ' || a.token || ' (released, taken over or never granted)' ` +
    `WHEN h.left_ms > 0 THEN 'its permit with token ' || a.token || ' was released or revoked' ` +
    `ELSE 'its permit with token ' || a.token || ' ran out ' || round(-h.left_ms) || ' ms ago by the database''s clock' END AS reason, h.left_ms, a.key ` +
    `FROM (${args}) a CROSS JOIN LATERAL (` +
    `SELECT bool_or(p.value ->> 'released' IS DISTINCT FROM 'true' AND p.value ->> 'revokedAt' IS NULL AND (p.value ->> 'expiresAt')::double precision > extract(epoch from clock_timestamp()) * 1000) AS held, ` +
    `max((p.value ->> 'expiresAt')::double precision - extract(epoch from clock_timestamp()) * 1000) AS left_ms ` +
    `FROM (SELECT value FROM "${schema}".records WHERE map = a.map AND key = a.key FOR KEY SHARE) r ` +
    `CROSS JOIN LATERAL jsonb_array_elements(r.value::jsonb -> 'permits') AS p(value) ` +
    `WHERE (p.value ->> 'fencingToken')::bigint = a.token) h`
  );
}

/** A quoted SQL string literal. */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * Same-database mode's check of one permit, at `fence()` and again at `COMMIT`, in one statement: why the permit is not
 * held now (`reason`, null when it is), whether the fence table has its commit check (`guarded`), and the permit's
 * check registered in the transaction for its `COMMIT` ({@link COMMIT_CHECKS}, by map, semaphore and token; the check is
 * the same query with the values written in, answering the message the `COMMIT` fails with, or null). Values: the
 * map, the semaphore, the token, the fence table.
 */
export function permitCheckSql(schema: string): string {
  let sql = PERMIT_CHECKS.get(schema);
  if (sql === undefined) {
    sql = preparable(permitCheckText(schema));
    PERMIT_CHECKS.set(schema, sql);
  }
  return sql;
}

/** {@link permitCheckSql} by schema, each made once. */
const PERMIT_CHECKS = new Map<string, string>();

function permitCheckText(schema: string): string {
  const atCommit = `SELECT 'Permit of "' || key || '" is lost at COMMIT: ' || reason || '; the fenced transaction was rolled back' FROM (${permitLossSql(schema, 'SELECT %L::text AS map, %L::text AS key, %s::bigint AS token')}) c`;
  return (
    `SELECT l.reason, l.left_ms, ` +
    `EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(t.fence_table) AND tgname = '${COMMIT_CHECK}' AND tgenabled = 'A' AND tgdeferrable AND tginitdeferred) AS guarded, ` +
    `set_config('${COMMIT_CHECKS}', (coalesce(nullif(current_setting('${COMMIT_CHECKS}', true), ''), '{}')::jsonb || ` +
    `jsonb_build_object(t.map || ' ' || t.key || ' ' || t.token, format(${literal(atCommit)}, t.map, t.key, t.token)))::text, true) AS registered ` +
    `FROM (SELECT $1::text AS map, $2::text AS key, $3::bigint AS token, $4::text AS fence_table) t ` +
    `CROSS JOIN LATERAL (${permitLossSql(schema, 'SELECT t.map, t.key, t.token')}) l`
  );
}
