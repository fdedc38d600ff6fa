import type { RecordCallOptions } from '../../../store/record-map';
import { StoreUnavailableError } from '../../../core/errors/store-unavailable.error';
import { invalidTaskInput } from '../../../core/errors/input.errors';
import type { RecordMap } from '../../../store/record-map';
import { observedMap } from '../../../store/observed-record-map';
import { storeCallsOf, type StoreCallObservers } from '../../../store/store-call-observers';
import { FINISHED_STATES, type TaskRecord } from '../../../store/tasks/task';
import { TASK_MAP, TaskRecordStore } from '../../../store/tasks/task-record.store';
import type { SqlTransaction, TaskQuery, VersionedTask } from '../../../store/tasks/task-store';
import { encodeTask } from '../../../store/tasks/task.codec';
import { inClaimOrder } from '../../../store/tasks/task-store.queries';
import type { PostgresTaskTable, PostgresTaskTables } from './postgres-task-table';
import { PostgresTaskWrites } from './postgres-task-writes';

/** Claim order in SQL, as `compareReady`: priority (highest first), then submit order, then id (code-point order). */
const CLAIM_ORDER = 'priority DESC, seq, key COLLATE "C"';
const FINISHED = [...FINISHED_STATES];

/**
 * Per type, the index's first due rows (a type's pending tasks that wait for their backoff are stepped over); lapsed
 * claims by their expiry; the first `$5` of both in claim order. `$1` is the map, `$2` the types, `$3` now, `$4` the
 * lapsed-before time.
 */
function claimableSql(table: string): string {
  return (
    `SELECT key, value FROM (` +
    `(SELECT p.key, p.value, p.priority, p.seq FROM unnest($2::text[]) AS w(type) CROSS JOIN LATERAL (` +
    `SELECT key, value, priority, seq FROM ${table} WHERE map = $1 AND type = w.type AND state = 'pending' AND not_before <= $3 ` +
    `ORDER BY ${CLAIM_ORDER} LIMIT $5) p) ` +
    `UNION ALL ` +
    `(SELECT key, value, priority, seq FROM ${table} WHERE map = $1 AND type = ANY($2::text[]) AND state = 'running' AND claim_expires < $4 ` +
    `ORDER BY ${CLAIM_ORDER} LIMIT $5)` +
    `) found ORDER BY ${CLAIM_ORDER} LIMIT $5`
  );
}

/** The first `limit` (a parameter's name) uncounted tasks of the types `$2` of the map `$1`, in claim order. */
function uncountedSql(table: string, limit: string): string {
  return `SELECT key, value FROM ${table} WHERE map = $1 AND uncounted AND type = ANY($2::text[]) ORDER BY ${CLAIM_ORDER} LIMIT ${limit}`;
}

/**
 * Tasks on PostgreSQL in a table of their own (`tasks`, migration 3), written as every record map is (one statement
 * that compares the exact stored text), with the fields claims are found by kept by the database itself as generated
 * columns. Each query is answered on an index and reads about what it returns, however long the backlog: the first
 * due tasks of each type in claim order (a partial index per state, one index scan per type, merged), lapsed claims
 * by their expiry, and the rest by state, group or finish time (a listing of one type's tasks in every state reads
 * the table). New work and new claims come from the table's trigger on the backend's one `LISTEN` connection, which
 * tells a pending task or a new claim with its value, and nothing of renewals or completions. Compare-and-sets asked
 * for together go out in one statement. Groups' records stay in a record map of the backend.
 */
export class PostgresTaskStore extends TaskRecordStore {
  private table?: PostgresTaskTable;
  private readonly writes = new PostgresTaskWrites(() => this.tableOf());

  /**
   * @param backend - The PostgreSQL backend the tasks live on (shared with the process's other capabilities).
   * @param callTimeoutMs - Deadline of a call given none, in ms. Default: the backend's.
   */
  /** Where its own statements (past the record map) are reported, as every backend's calls are. */
  private readonly observers: StoreCallObservers;

  constructor(private readonly postgres: PostgresTaskTables, callTimeoutMs?: number) {
    super(postgres, callTimeoutMs);
    this.observers = storeCallsOf(postgres);
  }

  /** The tasks' table's rows as a record map (the base store's reads, writes and feed run on it). */
  protected override async openTasks(): Promise<RecordMap> {
    this.table = this.postgres.taskTable(TASK_MAP);
    return observedMap(this.postgres, this.table.map);
  }

  /** {@inheritDoc TaskStore.close} */
  override async close(): Promise<void> {
    this.table = undefined;
    await super.close();
  }

  /**
   * {@inheritDoc TaskStore.compareAndSet}
   *
   * Creates and replaces asked for in one turn of the event loop share a statement ({@link PostgresTaskWrites}).
   */
  override compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options: RecordCallOptions = {}): Promise<boolean> {
    if (next === null) return super.compareAndSet(id, expected, next, options);
    return this.observers.report('tasks', performance.now(), this.writes.write(id, expected.raw, encodeTask(next), this.timeout(options).timeoutMs), false);
  }

  /** {@inheritDoc TaskStore.claimable} */
  override async claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0 || limit <= 0) return [];
    const t = this.tableOf();
    return this.found(claimableSql(t.table), [t.stored, [...new Set(types)], now, lapsedBefore, limit], `find claimable tasks of ${types.join(', ')}`, options, limit);
  }

  /** {@inheritDoc TaskStore.uncounted} */
  override async uncounted(types: readonly string[], limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0 || limit <= 0) return [];
    const t = this.tableOf();
    return this.found(uncountedSql(t.table, '$3'), [t.stored, [...new Set(types)], limit], 'find uncounted tasks', options, limit);
  }

  /** {@inheritDoc TaskStore.scan} (types and limits are never empty: see `scanTasks`) */
  async scan(types: readonly string[], now: number, lapsedBefore: number, limits: { readonly claimable: number; readonly uncounted: number }, options: RecordCallOptions = {}): Promise<{ claimable: TaskRecord[]; uncounted: TaskRecord[] }> {
    const t = this.tableOf();
    // Both queries in one statement, each row tagged with the one that found it.
    const sql = `(SELECT true AS claimable, key, value FROM (${claimableSql(t.table)}) c) UNION ALL (SELECT false, key, value FROM (${uncountedSql(t.table, '$6')}) u)`;
    const values = [t.stored, [...new Set(types)], now, lapsedBefore, limits.claimable, limits.uncounted];
    const rows = await this.observers.report('tasks', performance.now(), t.select<{ claimable: boolean; key: string; value: string }>(sql, values, `scan the tasks of ${types.join(', ')}`, this.timeout(options).timeoutMs));
    return {
      claimable: inClaimOrder(this.decodeAll(rows.filter((row) => row.claimable)), limits.claimable),
      uncounted: inClaimOrder(this.decodeAll(rows.filter((row) => !row.claimable)), limits.uncounted),
    };
  }

  /** {@inheritDoc TaskStore.finishedBefore} */
  override async finishedBefore(before: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (limit <= 0) return [];
    const t = this.tableOf();
    // Finished, counted, and not a parent whose sub-groups' joins it still waits for (`awaitsJoins`).
    const sql =
      `SELECT key, value FROM ${t.table} WHERE map = $1 AND state = ANY($2::text[]) AND finished_at < $3 AND NOT uncounted ` +
      `AND NOT (jsonb_array_length(coalesce(doc -> 'subgroups' -> 'submitted', '[]')) > 0 AND doc -> 'subgroups' -> 'joinSubmittedAt' IS NULL) ` +
      `ORDER BY ${CLAIM_ORDER} LIMIT $4`;
    return this.found(sql, [t.stored, FINISHED, before, limit], 'find finished tasks', options, limit);
  }

  /** {@inheritDoc TaskStore.query} */
  override async query(query: TaskQuery, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    const t = this.tableOf();
    const sql =
      `SELECT key, value FROM ${t.table} WHERE map = $1 AND ($2::text[] IS NULL OR type = ANY($2::text[])) ` +
      `AND ($3::text[] IS NULL OR state = ANY($3::text[])) AND ($4::text IS NULL OR group_name = $4) ORDER BY ${CLAIM_ORDER}`;
    const values = [t.stored, query.types ? [...query.types] : null, query.states ? [...query.states] : null, query.group ?? null];
    return this.found(sql, values, 'list tasks', options);
  }

  /** The readable tasks a query found, in claim order (the database's order, settled as `compareReady` does). */
  private async found(sql: string, values: unknown[], what: string, options: RecordCallOptions, limit?: number): Promise<TaskRecord[]> {
    const rows = await this.observers.report('tasks', performance.now(), this.tableOf().select<{ key: string; value: string }>(sql, values, what, this.timeout(options).timeoutMs));
    return inClaimOrder(this.decodeAll(rows), limit);
  }

  /**
   * {@inheritDoc TaskStore.writeInTransaction}
   *
   * The caller's transaction must be on the database that holds the backend's schema: a task written there wakes the
   * workers (the table's trigger) once it commits, as any write does.
   */
  async writeInTransaction(transaction: SqlTransaction, id: string, expected: string | null, raw: string): Promise<{ landed: boolean; current: string | null }> {
    const records = this.tableOf().inTransaction(transaction);
    try {
      const landed = expected === null ? await records.create(id, raw) : await records.replace({ key: id, value: expected }, raw);
      return landed ? { landed, current: raw } : { landed, current: (await records.get(id))?.value ?? null };
    } catch (error) {
      if (/relation "[^"]*tasks" does not exist|42P01/.test(`${(error as { code?: string }).code ?? ''} ${(error as Error).message}`)) {
        throw invalidTaskInput(id, 'transaction', `its database holds no tasks table of this app (${this.tableOf().table}): submit in a transaction of the database the PostgreSQL backend uses`);
      }
      throw error;
    }
  }

  private tableOf(): PostgresTaskTable {
    if (!this.table) throw new StoreUnavailableError('the task store is not connected');
    return this.table;
  }
}
