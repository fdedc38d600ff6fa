/*
 * The fencing group of npm run bench: what fence() adds to the transaction it guards. The same transaction, with and
 * without the fence, on the same server: `BEGIN`, [fence(resource, token)], one `UPDATE` of the writer's own row,
 * `COMMIT`, each writer on a connection of its own, BENCH_FENCED_TXS (2,000) transactions per row after 3,000 unmeasured
 * ones, measured in halves in the order fenced, plain, plain, fenced. On PostgreSQL (scripts/postgres.mjs) and on MariaDB through mysql2
 * (scripts/mariadb.mjs --durable), each a throwaway server of the bench's own:
 *   - 1 writer, and 8 concurrent writers;
 *   - 8 writers on one resource (one lease's transactions: all fence it with one token, so they take turns on its
 *     fence row, as writes in token order must) and on many (each writer its own resource).
 * p50/p99 of a whole transaction, and transactions per second. Target (the fenced p50 at most 1.3x the plain one)
 * for one writer and for many resources; one resource shared by concurrent writers is a queue by design. Beside them,
 * the floor of any fence that is a statement of its own: the plain transaction with one `SELECT 1` more.
 * Both servers are durable, as a user runs one: every COMMIT is flushed to disk.
 */
import { createPool as mysqlPool, type Pool as MysqlPool } from 'mysql2/promise';
import { Pool } from 'pg';
import { fence, fenceTableSql, mysql2Executor, pgExecutor, type FenceExecutor } from '../lib/fencing';
import { percentile, round, type BenchRow } from './bench-stats';
import { startBenchPostgres } from './postgres-systems';
import { serverFromScript } from './script-server';

const TXS = Number(process.env.BENCH_FENCED_TXS ?? 2_000);
/** Unmeasured transactions a row starts with, of each kind: a fresh process and server settle over the first two thousand or so (the p99 of the first 2,000 fenced ones runs 2–3 ms on MariaDB, then 0.4). */
const WARMUP = 3_000;
const TOKEN = 7;

type Dialect = 'postgres' | 'mysql';

/** What a row's transactions run between BEGIN and the UPDATE: the fence, nothing, or one more statement. */
type Kind = 'fenced' | 'plain' | 'floor';

/** One writer's connection: a transaction that runs `body` between BEGIN and COMMIT. */
interface Writer {
  transaction(body: (executor: FenceExecutor, update: () => Promise<unknown>) => Promise<void>): Promise<void>;
  release(): void;
}

interface Database {
  writer(id: number): Promise<Writer>;
  close(): Promise<void>;
}

async function postgresDatabase(url: string): Promise<Database> {
  const pool = new Pool({ connectionString: url, max: 10 });
  await pool.query('CREATE TABLE accounts (id int PRIMARY KEY, n bigint NOT NULL)');
  await pool.query('INSERT INTO accounts SELECT g, 0 FROM generate_series(0, 15) g');
  await pool.query(fenceTableSql('postgres'));
  return {
    async writer(id) {
      const client = await pool.connect();
      const executor = pgExecutor(client);
      return {
        async transaction(body) {
          await client.query('BEGIN');
          await body(executor, () => client.query('UPDATE accounts SET n = n + 1 WHERE id = $1', [id]));
          await client.query('COMMIT');
        },
        release: () => client.release(),
      };
    },
    close: () => pool.end(),
  };
}

async function mysqlDatabase(url: string): Promise<Database> {
  const pool: MysqlPool = mysqlPool({ uri: url, connectionLimit: 10 });
  await pool.query('CREATE TABLE accounts (id int PRIMARY KEY, n bigint NOT NULL) ENGINE=InnoDB');
  await pool.query(`INSERT INTO accounts VALUES ${Array.from({ length: 16 }, (_, i) => `(${i}, 0)`).join(', ')}`);
  await pool.query(fenceTableSql('mysql'));
  return {
    async writer(id) {
      const connection = await pool.getConnection();
      const executor = mysql2Executor(connection);
      return {
        async transaction(body) {
          await connection.beginTransaction();
          await body(executor, () => connection.query('UPDATE accounts SET n = n + 1 WHERE id = ?', [id]));
          await connection.commit();
        },
        release: () => connection.release(),
      };
    },
    close: () => pool.end(),
  };
}

/** `count` transactions of a kind over `writers` concurrent writers; each one's time in ms, and the wall time. */
async function measure(db: Database, writers: number, resources: 'one' | 'many', kind: Kind, count: number): Promise<{ samples: number[]; wallMs: number }> {
  const all = await Promise.all(Array.from({ length: writers }, (_, i) => db.writer(i)));
  const samples: number[] = [];
  const started = performance.now();
  try {
    await Promise.all(all.map(async (writer, i) => {
      const resource = resources === 'one' ? 'accounts' : `accounts-${i}`;
      for (let n = 0; n < Math.ceil(count / writers); n++) {
        const t0 = performance.now();
        await writer.transaction(async (executor, update) => {
          if (kind === 'fenced') await fence(executor, resource, TOKEN);
          else if (kind === 'floor') await executor.query('SELECT 1', []);
          await update();
        });
        samples.push(performance.now() - t0);
      }
    }));
  } finally {
    for (const writer of all) writer.release();
  }
  return { samples, wallMs: performance.now() - started };
}

const SYSTEMS = { fenced: 'fenced-transaction', plain: 'plain-transaction', floor: 'one-more-statement' } as const;

function row(dialect: Dialect, writers: number, resources: 'one' | 'many', kind: Kind, m: { samples: number[]; wallMs: number }): BenchRow {
  return {
    scenario: 'fenced-write', system: SYSTEMS[kind], nodes: writers, semaphores: resources === 'one' ? 1 : writers,
    runs: m.samples.length, p50Ms: round(percentile(m.samples, 50)), p99Ms: round(percentile(m.samples, 99)),
    opsPerSec: round(m.samples.length / (m.wallMs / 1000), 0), storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
    fencing: { dialect, resources },
  };
}

type Measured = { samples: number[]; wallMs: number };
const KINDS = ['fenced', 'plain', 'floor'] as const;

/** The rows of one dialect's server (a row's figures of each kind from the same halves, see dialectRows). */
async function dialectRows(dialect: Dialect, url: string, log: (line: string) => void): Promise<BenchRow[]> {
  const db = dialect === 'postgres' ? await postgresDatabase(url) : await mysqlDatabase(url);
  const rows: BenchRow[] = [];
  try {
    for (const [writers, resources] of [[1, 'many'], [8, 'many'], [8, 'one']] as const) {
      for (const kind of KINDS) await measure(db, writers, resources, kind, WARMUP);
      // Half each, in the order fenced, plain, floor, floor, plain, fenced: whatever the server or the process does
      // early in a row (a vacuum of the new tables, the JIT) falls on all alike.
      const measured = { fenced: [] as Measured[], plain: [] as Measured[], floor: [] as Measured[] };
      for (const kind of [...KINDS, ...[...KINDS].reverse()]) measured[kind].push(await measure(db, writers, resources, kind, TXS / 2));
      const merged = (parts: Measured[]) => ({ samples: parts.flatMap((p) => p.samples), wallMs: parts.reduce((sum, p) => sum + p.wallMs, 0) });
      const [fenced, plain, floor] = KINDS.map((kind) => row(dialect, writers, resources, kind, merged(measured[kind])));
      rows.push(plain, fenced, floor);
      const ratio = (r: BenchRow) => round(r.p50Ms! / plain.p50Ms!, 2);
      log(`  ${dialect}, ${writers} writer(s), ${resources === 'one' ? 'one resource' : 'a resource each'}: plain p50 ${plain.p50Ms} ms, p99 ${plain.p99Ms} ms, ${plain.opsPerSec}/s; fenced p50 ${fenced.p50Ms} ms (${ratio(fenced)}x), p99 ${fenced.p99Ms} ms, ${fenced.opsPerSec}/s; one more SELECT 1: p50 ${floor.p50Ms} ms (${ratio(floor)}x)`);
    }
  } finally {
    await db.close();
  }
  return rows;
}

/** The fencing group: PostgreSQL, then MariaDB, each on a server of its own that runs alone. */
export async function fencedWriteRows(log: (line: string) => void): Promise<BenchRow[]> {
  log(`fencing: a fenced transaction against the same one without the fence (${TXS} transactions a row), on PostgreSQL and MariaDB`);
  const rows: BenchRow[] = [];
  const postgres = await startBenchPostgres();
  try {
    rows.push(...(await dialectRows('postgres', postgres.url, log)));
  } finally {
    await postgres.stop();
  }
  const mariadb = await serverFromScript('mariadb.mjs', /^MariaDB running: (\S+)/, ['--durable']);
  try {
    rows.push(...(await dialectRows('mysql', mariadb.url, log)));
  } finally {
    await mariadb.stop();
  }
  return rows;
}
