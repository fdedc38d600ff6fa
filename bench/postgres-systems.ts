/*
 * The PostgreSQL side of the bench: a throwaway durable server (scripts/postgres.mjs, fsync and synchronous_commit
 * on), the gatekeeper on it, a plain advisory-lock baseline, and the raw compare-and-set floor.
 */
import { Client } from 'pg';
import { PostgresBackend } from '../lib/backends/postgres/postgres-backend';
import { systemClock } from '../lib/core/clock';
import { PermitRecordStore } from '../lib/permits/permit-record.store';
import { HistoryRecordStore } from '../lib/schedules/history-record.store';
import { percentile, round, timed, type BenchRow } from './bench-stats';
import { engineNode, historyNode, type BenchNode } from './bench-systems';
import { parentOf } from './proc-cpu';
import { serverFromScript } from './script-server';

/**
 * A PostgreSQL server of the bench's own, as a user runs one: durable (fsync, synchronous commits). `pid` is the
 * script that runs it; `serverPid` the postmaster (pg_ctl detaches it, so it is no descendant of the script),
 * found as the parent of a backend: the root of every server process, for the CPU columns.
 */
export async function startBenchPostgres(): Promise<{ url: string; pid: number; serverPid: number | undefined; stop: () => Promise<void> }> {
  const { url, child, stop } = await serverFromScript('postgres.mjs', /^PostgreSQL running: (\S+)/);
  const client = new Client({ connectionString: url });
  await client.connect();
  const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const serverPid = parentOf(backend);
  await client.end();
  return { url, pid: child.pid!, serverPid, stop };
}

/** Ours on PostgreSQL: the decorator's decisions on a PostgresBackend of its own (its pool, its LISTEN connection). */
export async function gatekeeperPostgresNode(name: string, url: string, mapPrefix: string, local = true): Promise<BenchNode & { store: PermitRecordStore }> {
  const store = new PermitRecordStore(new PostgresBackend({ connectionString: url, mapPrefix }));
  await store.connect({ clock: systemClock });
  return { ...engineNode(name, store, local), store };
}

/**
 * Ours on PostgreSQL with the run history on, as gatekeeperHistoryNode on Hazelcast (bench/bench-systems.ts): every
 * run a node makes is noted and written in batches (`HistoryRecorder`, every 10 s as the module's default), to a
 * history store on the same PostgresBackend as the permits (as the module builds them: one backend per node), its
 * calls counted with the permits'. What history adds to a held tick.
 */
export async function gatekeeperPostgresHistoryNode(name: string, url: string, mapPrefix: string): Promise<BenchNode> {
  const backend = new PostgresBackend({ connectionString: url, mapPrefix });
  const store = new PermitRecordStore(backend);
  await store.connect({ clock: systemClock });
  const history = new HistoryRecordStore(backend);
  await history.connect();
  return historyNode(name, store, history);
}

/**
 * The plain PostgreSQL lock a Nest user might write: a session advisory lock per job on one connection per node
 * (`pg_try_advisory_lock`), kept while held (hold mode asks nothing of the server then), given back by
 * `pg_advisory_unlock` (after `lockAtLeastFor`, as a timer). It has no lease: a node whose connection stays open
 * but which stopped working keeps the lock for ever, and there is no fencing token.
 */
export async function advisoryLockNode(url: string): Promise<BenchNode> {
  const client = new Client({ connectionString: url, application_name: 'bench advisory-lock' });
  await client.connect();
  const held = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  let trips = 0;
  const query = async (sql: string, key: string) => {
    trips++;
    return (await client.query<{ ok: boolean }>(sql, [key])).rows[0]?.ok === true;
  };
  return {
    async acquire(key) {
      if (held.has(key)) return true;
      const ok = await query('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', key);
      if (ok) held.add(key);
      return ok;
    },
    async release(key, lockAtLeastForMs = 0) {
      if (!held.has(key)) return;
      const unlock = async () => {
        held.delete(key);
        await query('SELECT pg_advisory_unlock(hashtext($1)) AS ok', key);
      };
      if (lockAtLeastForMs <= 0) return unlock();
      const timer = setTimeout(() => {
        timers.delete(timer);
        void unlock().catch(() => undefined);
      }, lockAtLeastForMs);
      timers.add(timer);
    },
    roundTrips: () => trips,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      await client.end();
    },
  };
}

/**
 * The floors a decision on PostgreSQL cannot beat: one compare-and-set of a row by its exact text, a name per call
 * (`UPDATE … WHERE key = $1 AND value = $2`), on one warm connection: bare (`floor-cas`), and with what a change feed
 * costs (`floor-cas-listened`: a trigger that `pg_notify`s the key and value, heard by another connection).
 */
export async function postgresFloorRows(url: string, count: number): Promise<BenchRow[]> {
  const client = new Client({ connectionString: url, application_name: 'bench floor' });
  const listener = new Client({ connectionString: url, application_name: 'bench floor listener' });
  await Promise.all([client.connect(), listener.connect()]);
  let heard = 0;
  listener.on('notification', () => heard++);
  await listener.query('LISTEN bench_floor');
  const rows: BenchRow[] = [];
  try {
    await client.query('DROP TABLE IF EXISTS bench_floor');
    await client.query('CREATE TABLE bench_floor (key text PRIMARY KEY, value text NOT NULL)');
    const cas = (key: string, from: string, to: string) => client.query('UPDATE bench_floor SET value = $3 WHERE key = $1 AND value = $2', [key, from, to]);
    for (const scenario of ['floor-cas', 'floor-cas-listened'] as const) {
      if (scenario === 'floor-cas-listened') {
        await client.query(`CREATE FUNCTION bench_floor_told() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_notify('bench_floor', json_build_object('k', NEW.key, 'v', NEW.value)::text); RETURN NULL; END $$`);
        await client.query('CREATE TRIGGER bench_floor_told AFTER UPDATE ON bench_floor FOR EACH ROW EXECUTE FUNCTION bench_floor_told()');
      }
      await client.query('TRUNCATE bench_floor');
      await client.query("INSERT INTO bench_floor SELECT 'f-' || i, 'v0' FROM generate_series(0, $1::int - 1) i", [count + 50]);
      for (let i = 0; i < 1_000; i++) await cas(`f-${count + (i % 50)}`, `v${Math.floor(i / 50)}`, `v${Math.floor(i / 50) + 1}`);
      const samples = await timed(count, (i) => cas(`f-${i}`, 'v0', 'v1'));
      const total = samples.reduce((a, b) => a + b, 0);
      rows.push({
        scenario, system: 'postgres-raw', nodes: 1, semaphores: 1, runs: samples.length,
        p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)), opsPerSec: round(samples.length / (total / 1000), 0),
        storeOpsPerTick: null, roundTripsPerDecision: 1, exactlyOncePct: null,
      });
    }
    if (heard === 0) throw new Error('the listened floor heard no notification: its trigger did not fire');
    return rows;
  } finally {
    await client.query('DROP TABLE IF EXISTS bench_floor; DROP FUNCTION IF EXISTS bench_floor_told()').catch(() => undefined);
    await Promise.all([client.end(), listener.end()]);
  }
}
