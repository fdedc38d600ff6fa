import { randomUUID } from 'node:crypto';
import type { SqlTransaction, TransactionRecords } from '../../store/sql-transaction';
import type * as Pg from 'pg';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import type { Counters } from '../../store/counter';
import type { RecordMap, RecordMapSpec } from '../../store/record-map';
import { SharedOpen } from '../../store/shared-open';
import { tellReport } from '../../store/backend-report';
import type { StoreBackend } from '../../store/store-backend';
import type { TaskStore } from '../../store/tasks/task-store';
import { PostgresCalls } from './postgres-calls';
import { ensureFieldIndex } from './postgres-field-index';
import { PostgresCounters } from './postgres-counters';
import { PostgresFeed } from './postgres-feed';
import type { PostgresBackendOptions } from './postgres-backend.options';
import { describeLostData, PostgresIncarnation, type IncarnationAnswer } from './postgres-incarnation';
import { newPool } from './postgres-pool';
import type { ConnectTarget } from '../../store/connect-failure';
import type { NewStoreRules } from '../../store/new-store-rules';
import type { NewStoreReport } from '../../store/new-store-report';
import { postgresConnectTarget } from './postgres-connect-target';
import { PostgresRecordMap, transactionRecords } from './postgres-record-map';
import { PostgresTaskStore } from './tasks/postgres-task.store';
import type { PostgresTaskTable } from './tasks/postgres-task-table';
import { checkIncarnation, DATABASE_NOW_MS, INCARNATION_COLUMNS, migrate, SCHEMA_VERSION, sweepExpired } from './postgres-schema';
import { ident } from './postgres-sql';
import { checkPostgresOptions } from './postgres-backend.check';
import { ClockReadings } from '../../store/clock-readings';

/** How often expired records' rows are dropped, in ms. */
const SWEEP_EVERY_MS = 30_000;
/** Deadline of a statement given none, and the server-side `statement_timeout` of a pool of the backend's own. */
const DEFAULT_CALL_TIMEOUT_MS = 10_000;

/**
 * The store contract on PostgreSQL (`pg`, an optional peer): record maps are rows of one `records` table, written
 * by single statements that compare the exact stored text; changes come from a trigger's `NOTIFY` on the schema's
 * channel, heard on a connection of the backend's own (a lost connection says changes may have been missed);
 * counters are rows advanced in one statement; TTLs and the store's clock are the database's
 * (`clock_timestamp()`). The schema is created and migrated at the first open, under an advisory lock.
 */
export class PostgresBackend implements StoreBackend {
  /** {@inheritDoc StoreBackend.kind} */
  readonly kind = 'postgres';
  /** The feed checks itself every `listenCheckMs` and tells every loss (`StoreBackend.feedTellsEveryLoss`). */
  readonly feedTellsEveryLoss = true;
  /** The prefix of this backend's map and counter names. */
  readonly mapPrefix: string;
  /** The schema of the library's tables. */
  readonly schema: string;
  /** Unique to this instance: its feed's connection checks carry it. */
  private readonly mark = randomUUID();
  private readonly clockReadings = new ClockReadings();
  private readonly opened = new SharedOpen(() => this.start(), () => this.stop());
  private pool?: Pg.Pool;
  private ownsPool = false;
  private readonly calls: PostgresCalls;
  private feed?: PostgresFeed;
  private countersOf?: PostgresCounters;
  private sweep?: NodeJS.Timeout;
  private readonly quoted: string;
  private readonly incarnation: PostgresIncarnation;
  /** The maps registered as forgetting their records on a restore. */
  private readonly forgetting = new Set<string>();

  constructor(private readonly options: PostgresBackendOptions) {
    ({ schema: this.schema, mapPrefix: this.mapPrefix } = checkPostgresOptions(options));
    this.quoted = ident(this.schema);
    this.incarnation = new PostgresIncarnation({ lost: (lostAt, forgotten) => this.lostData(lostAt, forgotten) });
    this.calls = new PostgresCalls(() => this.requirePool(), options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, (client) => this.checkOn(client));
  }

  /**
   * Checks on a new connection, before its first statement, that the database is still the one the state was
   * written in. A restore or a failover starts every connection anew, so no statement reads its state unchecked.
   */
  private async checkOn(client: Pg.PoolClient): Promise<void> {
    const result = await client.query<IncarnationAnswer>(`SELECT ${INCARNATION_COLUMNS} FROM ${checkIncarnation(this.quoted)}`, []);
    this.incarnation.observe(result.rows[0]);
  }

  /**
   * Checks the database's incarnation in one statement, through the pool: with `also` selected beside it (its
   * parameters `more`, from `$2` on).
   */
  private async checkIncarnation({ also = '', more = [], timeoutMs }: { also?: string; more?: unknown[]; timeoutMs?: number } = {}): Promise<IncarnationAnswer & Record<string, unknown>> {
    const sql = `SELECT ${also}${INCARNATION_COLUMNS} FROM ${checkIncarnation(this.quoted)}`;
    const result = await this.calls.query<IncarnationAnswer & Record<string, unknown>>(sql, more, 'check the database\'s incarnation', timeoutMs);
    this.incarnation.observe(result.rows[0]);
    return result.rows[0];
  }

  /** The database lost writes since `lostAt`: every view reads again, and the node that dropped records says which. */
  private lostData(lostAt: number, forgotten: readonly string[] | undefined): void {
    this.feed?.missed('lost-data');
    if (forgotten === undefined) return;
    const report = { schema: this.schema, lostAt, forgotten };
    tellReport(this.options.onLostData, report, 'error', describeLostData);
  }

  /** Makes the pool (unless given), migrates the schema and starts the change feed; later callers share it. */
  open(): Promise<void> {
    return this.opened.open();
  }

  /** {@inheritDoc StoreBackend.close} */
  close(): Promise<void> {
    return this.opened.close();
  }

  /** Lets go of what the last open made: the feed's connection, and the pool when it is the backend's own. */
  private async stop(): Promise<void> {
    const feed = this.feed;
    const pool = this.pool;
    this.feed = undefined;
    this.pool = undefined;
    this.countersOf = undefined;
    clearInterval(this.sweep);
    await feed?.close();
    if (pool && this.ownsPool) await pool.end().catch(() => undefined);
  }

  /**
   * Brings the library's schema to this version's and lets go, without opening the backend: for teams that migrate
   * ahead of a deploy (`nestjs-gatekeeper store migrate`). Nodes migrate at start anyway; both take the schema's
   * advisory lock, so they can run together. Refuses a schema newer than this version knows.
   * @returns the schema, and its version before and after.
   */
  async migrate(): Promise<{ schema: string; from: number; to: number }> {
    const pool = newPool(this.options, DEFAULT_CALL_TIMEOUT_MS);
    try {
      const from = await this.migrateOn(pool);
      return { schema: this.schema, from, to: Math.max(from, SCHEMA_VERSION) };
    } finally {
      if (!this.options.pool) await pool.end().catch(() => undefined);
    }
  }

  /** Migrates on a connection of `pool`; returns the version found before. */
  private async migrateOn(pool: Pg.Pool): Promise<number> {
    const client = await pool.connect().catch((error: unknown) => {
      throw new StoreUnavailableError(`PostgreSQL unreachable: ${(error as Error).message}`, { cause: error });
    });
    // A connection reset between two of the migration's statements emits 'error': the next statement fails with it.
    const onError = () => undefined;
    client.on('error', onError);
    try {
      return await migrate(client, this.schema, this.channel());
    } finally {
      client.off('error', onError);
      client.release();
    }
  }

  private async start(): Promise<void> {
    const pool = newPool(this.options, DEFAULT_CALL_TIMEOUT_MS);
    this.ownsPool = !this.options.pool;
    try {
      await this.migrateOn(pool);
    } catch (error) {
      if (this.ownsPool) await pool.end().catch(() => undefined);
      throw error;
    }
    if (!this.opened.isOpen()) {
      // Closed while it started: nobody will stop it.
      if (this.ownsPool) await pool.end().catch(() => undefined);
      return;
    }
    this.pool = pool;
    // What this node starts from: a loss found later is one it must tell its views of.
    await this.checkIncarnation().catch(async (error: unknown) => {
      this.pool = undefined;
      if (this.ownsPool) await pool.end().catch(() => undefined);
      throw error;
    });
    this.feed = new PostgresFeed({
      connect: () => pool.connect(),
      read: async (map, key) => {
        // A change too large to send, of a record map or of the tasks' own table (their maps' names differ).
        const sql = `SELECT value FROM ${this.quoted}.records WHERE map = $1 AND key = $2 UNION ALL SELECT value FROM ${this.quoted}.tasks WHERE map = $1 AND key = $2`;
        const result = await this.calls.query<{ value: string }>(sql, [map, key], `read ${map} "${key}"`);
        return result.rows[0]?.value ?? null;
      },
      notify: async (payload) => {
        // The feed's check of itself checks the database's incarnation (a logical restore into the same server leaves
        // the pool's connections open) and reads its clock, for the nodes' counts of it (see StoreClock.offer).
        const sentAt = performance.now();
        const row = await this.checkIncarnation({ also: `pg_notify($1, $2), ${DATABASE_NOW_MS} AS store_ms, `, more: [this.channel(), payload] });
        this.clockReadings.tell(Number(row.store_ms), sentAt);
      },
      channel: this.channel(),
      mark: this.mark,
      checkEveryMs: this.options.listenCheckMs ?? 5_000,
    });
    // Records past their TTL read as gone at once; their rows go in the background, and the trigger tells watchers.
    this.sweep = setInterval(() => void this.calls.query(sweepExpired(this.schema), [], 'drop expired records').catch(() => undefined), SWEEP_EVERY_MS);
    this.sweep.unref();
  }

  /** {@inheritDoc StoreBackend.map} */
  async map(name: string, spec: RecordMapSpec = {}): Promise<RecordMap> {
    const feed = this.feed;
    if (!feed) throw new StoreUnavailableError(`cannot open the ${name} map: the PostgreSQL backend is not open`);
    const indexes = spec.indexes ?? [];
    for (const field of indexes) await ensureFieldIndex(this.calls, this.schema, field);
    const stored = `${this.mapPrefix}.${name}`;
    if (spec.forgetOnRestore && !this.forgetting.has(stored)) {
      await this.calls.query(`INSERT INTO ${this.quoted}.forget_on_restore (map) VALUES ($1) ON CONFLICT DO NOTHING`, [stored], `register ${name}`);
      this.forgetting.add(stored);
    }
    return new PostgresRecordMap(name, stored, indexes.length > 0, {
      calls: this.calls, feed, schema: this.quoted, incarnation: this.incarnation,
      recheck: spec.forgetOnRestore ? async (timeoutMs) => void (await this.checkIncarnation({ timeoutMs })) : undefined,
    });
  }

  /** {@inheritDoc StoreBackend.recordsIn} */
  recordsIn(transaction: SqlTransaction, name: string): TransactionRecords {
    return transactionRecords(transaction, this.plainMap(name, 'records'));
  }

  /** The map `name` in `table`, with no index and no restore check (the tasks' rows; writes in a transaction). */
  private plainMap(name: string, table: 'records' | 'tasks'): PostgresRecordMap {
    if (!this.feed) throw new StoreUnavailableError(`cannot use the ${name} map: the PostgreSQL backend is not open`);
    return new PostgresRecordMap(name, `${this.mapPrefix}.${name}`, false, { calls: this.calls, feed: this.feed, schema: this.quoted, table, incarnation: this.incarnation });
  }

  /** The tasks' own table (migration 3) for the task store: its rows as a map (every map's statements), its queries. @internal */
  taskTable(name: string): PostgresTaskTable {
    const map = this.plainMap(name, 'tasks');
    return {
      map,
      inTransaction: (transaction) => transactionRecords(transaction, map),
      stored: `${this.mapPrefix}.${name}`,
      table: `${this.quoted}.tasks`,
      schema: this.quoted,
      select: async <R extends object>(sql: string, values: unknown[], what: string, timeoutMs?: number) => (await this.calls.query(sql, values, what, timeoutMs)).rows as R[],
    };
  }

  /** {@inheritDoc StoreBackend.counters} */
  async counters(): Promise<Counters> {
    if (!this.pool) throw new StoreUnavailableError('cannot count: the PostgreSQL backend is not open');
    return (this.countersOf ??= new PostgresCounters(this.calls, this.quoted, this.mapPrefix, this.incarnation));
  }

  /** The database's clock (`clock_timestamp()`), in epoch ms. */
  async now(): Promise<number> {
    const result = await this.calls.query<{ now: string }>(`SELECT ${DATABASE_NOW_MS} AS now`, [], 'read the database clock');
    return Number(result.rows[0].now);
  }

  /** {@inheritDoc StoreBackend.onClockReading} */
  onClockReading(listener: (storeMs: number, sentAt: number) => void): () => void {
    return this.clockReadings.add(listener);
  }

  /** Declares the schema new (see `StoreBackend.declareNew`): it is when this call creates it (see `migrate`). */
  async declareNew(_rules: readonly NewStoreRules[] = []): Promise<NewStoreReport> {
    const { schema, from } = await this.migrate();
    return { store: `PostgreSQL schema "${schema}"`, declared: from === 0, alreadyNew: false, waitsLifted: [] };
  }

  /** {@inheritDoc StoreBackend.describe} */
  describe(): ConnectTarget {
    return postgresConnectTarget(this.options);
  }

  /** {@inheritDoc StoreBackend.memberCount} */
  memberCount(): number | undefined {
    return undefined;
  }


  /** {@inheritDoc StoreBackend.isConnected} */
  isConnected(): boolean {
    return this.opened.isOpen() && this.pool !== undefined && this.calls.reachable();
  }

  /** {@inheritDoc StoreBackend.operationCount} */
  operationCount(): number {
    return this.calls.operations();
  }

  /** {@inheritDoc StoreBackend.taskStore} */
  taskStore(): TaskStore {
    return new PostgresTaskStore(this);
  }

  /** The notification channel of the schema's changes. */
  private channel(): string {
    return `${this.schema}_changes`;
  }

  private requirePool(): Pg.Pool {
    if (!this.pool) throw new StoreUnavailableError('the PostgreSQL backend is not open');
    return this.pool;
  }
}
