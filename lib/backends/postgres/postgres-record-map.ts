import type { QueryResult } from 'pg';
import { invalidDefinition } from '../../core/errors/input.errors';
import { recordField } from '../../store/record-field';
import type { RecordCallOptions, RecordChanges, RecordMap, RecordWriteOptions, StoredRecord, Unwatch, WatchOptions } from '../../store/record-map';
import type { SqlTransaction, TransactionRecords } from '../../store/sql-transaction';
import type { PostgresCalls } from './postgres-calls';
import type { PostgresFeed } from './postgres-feed';
import type { IncarnationAnswer, PostgresIncarnation } from './postgres-incarnation';
import { checkIncarnation, DATABASE_NOW_MS, INCARNATION_COLUMNS, OWN_REMOVAL } from './postgres-schema';

/** What a {@link PostgresRecordMap} is given by its backend. */
export interface PostgresRecordMapContext {
  readonly calls: PostgresCalls;
  readonly feed: PostgresFeed;
  /** The quoted schema (`"gatekeeper"`). */
  readonly schema: string;
  /** The table of the map's rows, in the schema: `records` unless a capability has one of its own (`tasks`). */
  readonly table?: string;
  /** Since when the database may have lost writes (a restore, a failover). */
  readonly incarnation: PostgresIncarnation;
  /**
   * Only for a map whose records are dropped on a restore (`forgetOnRestore`): checks the database's incarnation
   * again, when a read finds rows of a table other than the one last checked.
   */
  readonly recheck?: (timeoutMs?: number) => Promise<void>;
}

/** A record not past its TTL, on the database's clock. */
const LIVE = '(expires_at IS NULL OR expires_at > clock_timestamp())';
/** The TTL column of a write: `$n` ms from now on the database's clock, or none. */
const expiresAt = (n: number) => `CASE WHEN $${n}::bigint IS NULL THEN NULL ELSE clock_timestamp() + $${n}::bigint * interval '1 millisecond' END`;

/**
 * One record map in the `records` table, under `map` = `<prefix>.<name>`: create is an `INSERT … ON CONFLICT` that
 * takes only an expired row's place, replace an `UPDATE … WHERE value = $expected`, remove a `DELETE … WHERE value =
 * $expected`, each one statement (one round trip, atomic on the server). A map with indexes keeps a `jsonb` copy of
 * each value, so `findBy` runs on the database's index. TTLs count on the database's clock.
 */
export class PostgresRecordMap implements RecordMap {
  private readonly table: string;

  constructor(
    readonly name: string,
    /** The map's name in the table (`<prefix>.<name>`). */
    private readonly stored: string,
    private readonly json: boolean,
    private readonly context: PostgresRecordMapContext,
  ) {
    this.table = `${context.schema}.${context.table ?? 'records'}`;
  }

  async get(key: string, options: RecordCallOptions = {}): Promise<StoredRecord | undefined> {
    return (await this.rows(`map = $1 AND key = $2 AND ${LIVE}`, [this.stored, key], `read ${this.name} "${key}"`, options))[0];
  }

  async getMany(keys: readonly string[], options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    if (keys.length === 0) return [];
    return this.rows(`map = $1 AND key = ANY($2::text[]) AND ${LIVE}`, [this.stored, [...keys]], `read ${keys.length} of ${this.name}`, options);
  }

  async list(options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    return this.rows(`map = $1 AND ${LIVE}`, [this.stored], `list ${this.name}`, options);
  }

  async findBy(field: string, value: string | number | boolean, options: RecordCallOptions = {}): Promise<StoredRecord[]> {
    const what = `find ${this.name} by ${field}`;
    if (this.json) {
      return this.rows(`map = $1 AND doc IS NOT NULL AND (doc -> $2::text) = $3::jsonb AND ${LIVE}`, [this.stored, field, JSON.stringify(value)], what, options);
    }
    // Values of a map without indexes need not be JSON: filtered here, as the contract lets a backend.
    return (await this.list(options)).filter((record) => recordField(record.value, field) === value);
  }

  async create(key: string, value: string, options: RecordWriteOptions = {}): Promise<boolean> {
    return this.write(this.createSql(), [this.stored, key, value, this.doc(value), options.ttlMs ?? null], `create ${this.name} "${key}"`, options);
  }

  async replace(expected: StoredRecord, value: string, options: RecordWriteOptions = {}): Promise<boolean> {
    const params = [this.stored, expected.key, expected.value, value, this.doc(value), options.ttlMs ?? null, options.notBefore ?? null];
    return this.write(this.replaceSql(), params, `write ${this.name} "${expected.key}"`, options);
  }

  /**
   * Its reads and compare-and-sets inside the application's own transaction (`StoreBackend.recordsIn`): the same
   * statements, on the transaction's connection; each write says whether it landed by the row it returns.
   */
  inTransaction(transaction: SqlTransaction): TransactionRecords {
    return {
      get: async (key) => {
        const [row] = await transaction.query(`SELECT key, value FROM ${this.table} WHERE map = $1 AND key = $2 AND ${LIVE}`, [this.stored, key]);
        return row === undefined ? undefined : { key: String(row.key), value: String(row.value) };
      },
      create: async (key, value, ttlMs) => (await transaction.query(this.createInTransactionSql(), [this.stored, key, value, this.doc(value), ttlMs ?? null])).length === 1,
      replace: async (expected, value) => (await transaction.query(this.replaceInTransactionSql(), [this.stored, expected.key, expected.value, value, this.doc(value)])).length === 1,
    };
  }

  /**
   * {@link createSql} for the application's transaction, its values each bound once and in order (tools such as Knex
   * and MikroORM bind `?` by position). Values: map, key, value, doc, TTL ms.
   */
  private createInTransactionSql(): string {
    return `WITH a AS (SELECT $1::text AS map, $2::text AS key, $3::text AS value, $4::jsonb AS doc, $5::bigint AS ttl) ` +
      `INSERT INTO ${this.table} AS r (map, key, value, doc, expires_at) ` +
      `SELECT a.map, a.key, a.value, a.doc, CASE WHEN a.ttl IS NULL THEN NULL ELSE clock_timestamp() + a.ttl * interval '1 millisecond' END FROM a ` +
      `ON CONFLICT (map, key) DO UPDATE SET value = EXCLUDED.value, doc = EXCLUDED.doc, expires_at = EXCLUDED.expires_at ` +
      `WHERE r.expires_at IS NOT NULL AND r.expires_at <= clock_timestamp() RETURNING r.key`;
  }

  /**
   * Replace against the exact value, in the application's transaction, its values each bound once and in order: map,
   * key, expected, value, doc (no TTL, no not-before).
   */
  private replaceInTransactionSql(): string {
    return `WITH a AS (SELECT $1::text AS map, $2::text AS key, $3::text AS expected, $4::text AS value, $5::jsonb AS doc) ` +
      `UPDATE ${this.table} r SET value = a.value, doc = a.doc, expires_at = NULL FROM a ` +
      `WHERE r.map = a.map AND r.key = a.key AND r.value = a.expected AND (r.expires_at IS NULL OR r.expires_at > clock_timestamp()) RETURNING r.key`;
  }

  /** Create: a row where there is none, or in an expired row's place. Parameters: map, key, value, doc, TTL ms. */
  private createSql(): string {
    return `INSERT INTO ${this.table} AS r (map, key, value, doc, expires_at) VALUES ($1, $2, $3, $4::jsonb, ${expiresAt(5)}) ` +
      `ON CONFLICT (map, key) DO UPDATE SET value = EXCLUDED.value, doc = EXCLUDED.doc, expires_at = EXCLUDED.expires_at ` +
      `WHERE r.expires_at IS NOT NULL AND r.expires_at <= clock_timestamp()`;
  }

  /** Replace against the exact value. Parameters: map, key, expected, value, doc, TTL ms, not before (epoch ms). */
  private replaceSql(): string {
    return `UPDATE ${this.table} SET value = $4, doc = $5::jsonb, expires_at = ${expiresAt(6)} WHERE map = $1 AND key = $2 AND value = $3 AND ${LIVE} `
      + `AND ($7::bigint IS NULL OR clock_timestamp() >= to_timestamp($7::bigint / 1000.0))`;
  }

  async remove(expected: StoredRecord, options: RecordCallOptions = {}): Promise<boolean> {
    const sql = `DELETE FROM ${this.table} WHERE map = $1 AND key = $2 AND value = $3 AND ${LIVE} AND ${OWN_REMOVAL}`;
    return this.write(sql, [this.stored, expected.key, expected.value], `remove ${this.name} "${expected.key}"`, options);
  }

  async put(key: string, value: string, options: RecordWriteOptions = {}): Promise<void> {
    const sql =
      `INSERT INTO ${this.table} (map, key, value, doc, expires_at) VALUES ($1, $2, $3, $4::jsonb, ${expiresAt(5)}) ` +
      `ON CONFLICT (map, key) DO UPDATE SET value = EXCLUDED.value, doc = EXCLUDED.doc, expires_at = EXCLUDED.expires_at`;
    await this.query(sql, [this.stored, key, value, this.doc(value), options.ttlMs ?? null], `write ${this.name} "${key}"`, options);
  }

  async delete(key: string, options: RecordCallOptions = {}): Promise<void> {
    await this.query(`DELETE FROM ${this.table} WHERE map = $1 AND key = $2 AND ${OWN_REMOVAL}`, [this.stored, key], `remove ${this.name} "${key}"`, options);
  }

  /**
   * Since when the record may have been lost: marked lost (`markLost`, or dropped by a restore as a lease), or any
   * record since the database was found restored or failed over. The database's incarnation is checked in the same
   * statement, so a node asking for an absent record cannot miss a restore no other node has seen yet.
   */
  async lostSince(key: string, options: RecordCallOptions = {}): Promise<number | undefined> {
    const schema = this.context.schema;
    const sql = `SELECT (SELECT at FROM ${schema}.lost_marks WHERE map = $1 AND key = $2) AS at, ${INCARNATION_COLUMNS} FROM ${checkIncarnation(schema)}`;
    const result = await this.query<{ at: string | null } & IncarnationAnswer>(sql, [this.stored, key], `read whether ${this.name} "${key}" was lost`, options);
    const row = result.rows[0];
    const store = this.context.incarnation.observe(row);
    const times = [row.at === null ? undefined : Number(row.at), store].filter((t): t is number => t !== undefined);
    return times.length === 0 ? undefined : Math.max(...times);
  }

  async lostValue(key: string, options: RecordCallOptions = {}): Promise<string | undefined> {
    const sql = `SELECT value FROM ${this.context.schema}.lost_marks WHERE map = $1 AND key = $2 AND value IS NOT NULL`;
    const result = await this.query<{ value: string }>(sql, [this.stored, key], `read what a restore dropped of ${this.name} "${key}"`, options);
    return result.rows[0]?.value;
  }

  async markLost(key: string, options: RecordCallOptions = {}): Promise<void> {
    // On the database's clock, which times permits: a recovery wait counted from it is never cut by a node's clock.
    const sql =
      `INSERT INTO ${this.context.schema}.lost_marks (map, key, at) VALUES ($1, $2, ${DATABASE_NOW_MS}) ` +
      `ON CONFLICT (map, key) DO UPDATE SET at = GREATEST(${this.context.schema}.lost_marks.at, EXCLUDED.at)`;
    await this.query(sql, [this.stored, key], `mark ${this.name} "${key}" lost`, options);
  }

  watch(changes: RecordChanges, options: WatchOptions = {}): Promise<Unwatch> {
    return this.context.feed.watch(this.stored, this.name, changes, options.exceptMark);
  }

  /** A compare-and-set: true when one row was written. A late answer goes to `lateOutcome` (see `PostgresCalls`). */
  private write(sql: string, values: unknown[], what: string, options: RecordWriteOptions): Promise<boolean> {
    const tell = options.lateOutcome;
    const late = tell && ((result: QueryResult | undefined) => tell(result === undefined ? undefined : result.rowCount === 1));
    return this.context.calls.query(sql, values, what, options.timeoutMs, late).then((result) => result.rowCount === 1);
  }

  private query<R extends object>(sql: string, values: unknown[], what: string, options: RecordCallOptions): Promise<QueryResult<R & Record<string, unknown>>> {
    return this.context.calls.query<R & Record<string, unknown>>(sql, values, what, options.timeoutMs);
  }

  /**
   * The map's live rows matching `where` (a condition on `records`). In a map that forgets its records on a restore,
   * each row's `tableoid` must be the table the database's incarnation was last checked with: a logical restore into
   * the same server makes the table anew under connections that are not new, so a row of another table has the
   * incarnation checked (dropping those records if it is a restore) and the rows read again. (An absent record is
   * checked by `lostSince`, which its capability asks next.) So no connection, however old, serves a restored lease.
   */
  private async rows(where: string, values: unknown[], what: string, options: RecordCallOptions): Promise<StoredRecord[]> {
    const recheck = this.context.recheck;
    if (!recheck) return (await this.query<StoredRecord>(`SELECT key, value FROM ${this.table} WHERE ${where}`, values, what, options)).rows;
    const sql = `SELECT key, value, tableoid::bigint AS t FROM ${this.table} WHERE ${where}`;
    const read = async () => (await this.query<StoredRecord & { t: string }>(sql, values, what, options)).rows;
    let rows = await read();
    if (rows.some((row) => !this.context.incarnation.checkedTable(Number(row.t)))) {
      await recheck(options.timeoutMs);
      rows = await read();
    }
    return rows.map(({ key, value }) => ({ key, value }));
  }

  /** The `jsonb` copy of a value in a map with indexes (`null` in the others). */
  private doc(value: string): string | null {
    return this.json ? value : null;
  }
}

/** `map`'s statements in the application's transaction, once it is one they can run in (PostgreSQL's). */
export function transactionRecords(transaction: SqlTransaction, map: PostgresRecordMap): TransactionRecords {
  if (transaction?.dialect !== 'postgres' || typeof transaction.query !== 'function') {
    throw invalidDefinition(undefined, 'transaction', `must be a PostgreSQL executor of the database the backend uses (pgExecutor, typeormExecutor, prismaExecutor, ...), got a dialect of ${JSON.stringify(transaction?.dialect)}`);
  }
  return map.inTransaction(transaction);
}
