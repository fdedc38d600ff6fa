import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPool as mysqlPool } from 'mysql2/promise';
import { Pool } from 'pg';
import { fenceTableSql } from '../../lib/fencing';
import { leaseHeldSql } from '../../lib/fencing/fence-sql';
import { newHistoryFile } from '../harness/fault-cluster';
import { lateWrites, recordLapsed, recordResourceRows, staleWrites, type FencedWriteEvent } from '../harness/fenced-writes';
import { readHistory, recordNemesis } from '../harness/history';
import { TcpProxy } from '../harness/tcp-proxy';
import { startNodeProcess, type NodeProcess } from '../harness/node-process';
import { storeTargetEnv, type StoreTarget } from '../harness/store-target';
import { eventually } from '../support/eventually';
import { freshDatabase } from '../support/fresh-database';
import { uniquePrefix } from '../support/test-cluster';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';

const SCRIPT = join(__dirname, '../fixtures/fenced-writer-app.ts');
/** The permit's lease (fenced-writer-app.ts) and its skew allowance: how long a frozen holder's permit outlives the freeze at most. */
const SKEW_MS = 200;
const LEASE_MS = 2_000 + SKEW_MS;

/** Where the resource is: a PostgreSQL or a MariaDB database, or a `@Fenced` route of another service (`http`). */
type Dialect = 'postgres' | 'mysql' | 'http';
const RECEIVER = join(__dirname, '../fixtures/fenced-receiver-app.ts');

/** The rows of the ledger in commit order, as its database holds them (the receiving service: its ledger file). */
async function ledgerRows(dialect: Dialect, url: string): Promise<Array<{ node: string; token: number }>> {
  if (dialect === 'http') return readFileSync(url, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { node: string; token: number });
  if (dialect === 'postgres') {
    const pool = new Pool({ connectionString: url, max: 1 });
    const { rows } = await pool.query('SELECT node, token FROM ledger ORDER BY id').finally(() => pool.end());
    return rows.map((r) => ({ node: r.node, token: Number(r.token) }));
  }
  const pool = mysqlPool({ uri: url, connectionLimit: 1 });
  const [rows] = await pool.query('SELECT node, token FROM ledger ORDER BY id').finally(() => pool.end());
  return (rows as Array<{ node: string; token: number }>).map((r) => ({ node: r.node, token: Number(r.token) }));
}

/** `host` and `port` of a `redis://host:port` URL. */
const addressOf = (url: string) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) });

const writes = (file: string) => (readHistory(file) as unknown as FencedWriteEvent[]).filter((e) => e.type === 'write');

/**
 * The classic scenario of fenced writes, with real processes: holder A checks its lease and is frozen (SIGSTOP)
 * just before its write, past its lease; B is granted the permit and writes; A is thawed and writes with the token
 * it checked (the local lease can no longer warn it: it checked before it froze). The resource's database must
 * refuse A's write: its rows stay in token order. The control runs the same without the fence, and A's stale write
 * lands. Under a permit on PostgreSQL (permits on PostgreSQL), on MariaDB through mysql2 (permits on Redis), and over
 * HTTP: the write a call to a `@Fenced` route of another Nest process, which keeps its fences on Redis (permits on
 * PostgreSQL); and on PostgreSQL under an election's leadership (its epoch the token, on Redis) and under a task
 * claim (its epoch, on PostgreSQL), whose holder is frozen until another node leads or has claimed the task again.
 * And with A cut off from the permits' store (its Redis connections through a proxy that turns into a dead network)
 * instead of frozen: it keeps running, and writes when told, as a holder that checked just before the cut would.
 */
describe.each([
  { dialect: 'postgres', store: { postgresUrl: testPostgresUrl() }, kind: 'permit', fault: 'freeze' },
  { dialect: 'mysql', store: { redisUrl: testRedisUrl() }, kind: 'permit', fault: 'freeze' },
  { dialect: 'http', store: { postgresUrl: testPostgresUrl() }, kind: 'permit', fault: 'freeze' },
  { dialect: 'postgres', store: { redisUrl: testRedisUrl() }, kind: 'leader', fault: 'freeze' },
  { dialect: 'postgres', store: { postgresUrl: testPostgresUrl() }, kind: 'task', fault: 'freeze' },
  { dialect: 'postgres', store: { redisUrl: testRedisUrl() }, kind: 'permit', fault: 'partition' },
] as ReadonlyArray<{ dialect: Dialect; store: StoreTarget; kind: 'permit' | 'leader' | 'task'; fault: 'freeze' | 'partition' }>)('a holder under a $kind, its fault $fault before its write, on $dialect', ({ dialect, store, kind, fault }) => {
  const nodes: NodeProcess[] = [];
  const proxies: TcpProxy[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  /**
   * The resource the holders write to: a fresh database with the ledger and the fence table, or a receiving service
   * (its fences on Redis) with its ledger file; where the rows are read, and what the holders are told.
   */
  async function resource(label: string, history: string): Promise<{ url: string; env: NodeJS.ProcessEnv }> {
    if (dialect === 'http') {
      const ledger = `${history}.ledger`;
      writeFileSync(ledger, '');
      const receiver = await startNodeProcess(RECEIVER, 'receiver', { LEDGER_FILE: ledger, MAP_PREFIX: uniquePrefix('fences'), ...storeTargetEnv({ redisUrl: testRedisUrl() }) });
      nodes.push(receiver);
      const port = /PORT (\d+)/.exec(receiver.output())![1];
      return { url: ledger, env: { RECEIVER_URL: `http://127.0.0.1:${port}/entries` } };
    }
    const table = dialect === 'postgres' ? 'CREATE TABLE ledger (id serial PRIMARY KEY, node text NOT NULL, token bigint NOT NULL)' : 'CREATE TABLE ledger (id int AUTO_INCREMENT PRIMARY KEY, node varchar(50) NOT NULL, token bigint NOT NULL)';
    const url = await freshDatabase(dialect, `${label}_${Date.now().toString(36)}`, [table, fenceTableSql(dialect)]);
    return { url, env: { DATA_URL: url } };
  }

  /** Runs the scenario, fenced or not; answers the history file and where the resource's rows are. */
  async function scenario(fenced: boolean): Promise<{ history: string; url: string; frozenMs: number }> {
    const label = `fenced_${dialect}_${kind}_${fenced ? 'on' : 'off'}`;
    const history = newHistoryFile(label);
    const { url, env } = await resource(label, history);
    const base = { HISTORY_FILE: history, MAP_PREFIX: uniquePrefix('fenced'), DATA_DIALECT: dialect, LEASE_KIND: kind, FENCE: fenced ? '1' : '0', ...env, ...storeTargetEnv(store) };
    const goA = `${history}.go-a`;
    const goB = `${history}.go-b`;
    writeFileSync(goB, '');
    // Cut off rather than frozen: node-a reaches the permits' Redis through a proxy the test turns into a dead network.
    const proxy = fault === 'partition' ? await TcpProxy.listen({ target: addressOf(testRedisUrl()) }) : undefined;
    proxies.push(...(proxy ? [proxy] : []));
    const aStore = proxy ? storeTargetEnv({ redisUrl: `redis://${proxy.address}` }) : {};
    const a = await startNodeProcess(SCRIPT, 'node-a', { ...base, ...aStore, GO_FILE: goA }, history);
    nodes.push(a);
    const checked = await eventually('node-a to check its lease', () => writes(history).find((e) => e.node === 'node-a' && e.phase === 'checked'), { timeoutMs: 20_000, intervalMs: 20 });
    if (proxy) {
      recordNemesis(history, 'blackhole', 'node-a');
      proxy.blackhole();
    } else a.freeze();
    const frozenAt = Date.now();
    const b = await startNodeProcess(SCRIPT, 'node-b', { ...base, GO_FILE: goB }, history);
    nodes.push(b);
    const bWrote = await eventually(`node-b to be granted the ${kind} and write`, () => writes(history).find((e) => e.node === 'node-b' && e.phase === 'committed'), { timeoutMs: 4 * LEASE_MS + 10_000, intervalMs: 20 });
    expect(bWrote.token).toBeGreaterThan(checked.token);
    writeFileSync(goA, '');
    if (!proxy) a.resume();
    const frozenMs = Date.now() - frozenAt;
    await eventually('node-a to finish its write', () => writes(history).find((e) => e.node === 'node-a' && (e.phase === 'committed' || e.phase === 'refused')), { timeoutMs: 20_000, intervalMs: 20 });
    proxy?.heal(); // so that node-a stops as it would, its connections back
    recordResourceRows(history, 'ledger', await ledgerRows(dialect, url));
    return { history, url, frozenMs };
  }

  it('fenced: the late holder\'s write is refused, and the resource stays in token order', async () => {
    const { history, frozenMs } = await scenario(true);
    const events = writes(history);
    const a = events.find((e) => e.node === 'node-a' && e.phase !== 'checked')!;
    const b = events.find((e) => e.node === 'node-b' && e.phase === 'committed')!;
    expect(a).toMatchObject({ phase: 'refused', newer: b.token });
    expect(staleWrites(readHistory(history))).toEqual([]);
    const rows = (readHistory(history) as unknown as Array<{ type: string; rows?: unknown }>).find((e) => e.type === 'resource')!.rows;
    expect(rows).toEqual([{ node: 'node-b', token: b.token }]);
    process.stdout.write(`fenced writes on ${dialect} under a ${kind}: node-a ${fault === 'partition' ? 'cut off' : 'frozen'} ${frozenMs} ms before its write (lease ${LEASE_MS} ms); node-b wrote with token ${b.token}; node-a's write with token ${a.token} refused; stale writes: 0\n`);
  }, 90_000);

  it('control, unfenced: the late holder\'s stale write lands after the newer holder\'s', async () => {
    const { history } = await scenario(false);
    const stale = staleWrites(readHistory(history));
    expect(stale.length).toBeGreaterThan(0);
    expect(stale[0]).toMatchObject({ resource: 'ledger', node: 'node-a' });
    process.stdout.write(`fenced writes on ${dialect} under a ${kind}, control without the fence: node-a's stale write landed after token ${stale[0].after}\n`);
  }, 90_000);
});

/**
 * Same-database mode: the permits live in the PostgreSQL database the write goes to. Holder A checks its lease and is
 * frozen just before its write until its permit ran out by the database's clock, with nobody else granted; thawed,
 * it writes. With `checkLease` the transaction is refused (the permit checked on the database's clock, in the same
 * transaction); the control fences the token alone, which no newer holder raised, and the late write lands.
 */
describe('a holder frozen past its lease with nobody after it, permits in the same PostgreSQL database', () => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
  });

  async function scenario(checkLease: boolean): Promise<{ history: string; lapsedAfterMs: number }> {
    const label = `same_db_${checkLease ? 'on' : 'off'}`;
    const history = newHistoryFile(label);
    const url = await freshDatabase('postgres', `${label}_${Date.now().toString(36)}`, ['CREATE TABLE ledger (id serial PRIMARY KEY, node text NOT NULL, token bigint NOT NULL)', fenceTableSql('postgres')]);
    const mapPrefix = uniquePrefix('same-db');
    const go = `${history}.go-a`;
    const a = await startNodeProcess(SCRIPT, 'node-a', {
      HISTORY_FILE: history, MAP_PREFIX: mapPrefix, DATA_DIALECT: 'postgres', DATA_URL: url, FENCE: '1', CHECK_LEASE: checkLease ? '1' : '0', GO_FILE: go,
      ...storeTargetEnv({ postgresUrl: url }),
    }, history);
    nodes.push(a);
    const checked = await eventually('node-a to check its lease', () => writes(history).find((e) => e.phase === 'checked'), { timeoutMs: 20_000, intervalMs: 20 });
    a.freeze();
    const frozenAt = Date.now();
    // The permit's end, as the database tells it (the same check same-database mode makes), and the skew bound after
    // it: until then the holder's keep-alive may still refresh the permit (nobody else may take it), and holds it again.
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      await eventually('the permit to run out by the database\'s clock, past the skew bound', async () => {
        const { rows } = await pool.query(leaseHeldSql('gatekeeper'), [`${mapPrefix}.semaphores`, 'ledger', checked.token]);
        return rows[0].held !== true && (rows[0].left_ms === null || Number(rows[0].left_ms) < -SKEW_MS);
      }, { timeoutMs: 4 * LEASE_MS, intervalMs: 50 });
    } finally {
      await pool.end();
    }
    recordLapsed(history, checked.token);
    const lapsedAfterMs = Date.now() - frozenAt;
    writeFileSync(go, '');
    a.resume();
    await eventually('node-a to finish its write', () => writes(history).find((e) => e.phase === 'committed' || e.phase === 'refused'), { timeoutMs: 20_000, intervalMs: 20 });
    return { history, lapsedAfterMs };
  }

  it('with checkLease: the late write is refused on the database\'s clock', async () => {
    const { history, lapsedAfterMs } = await scenario(true);
    expect(writes(history).find((e) => e.phase !== 'checked')).toMatchObject({ phase: 'refused' });
    expect(lateWrites(readHistory(history))).toEqual([]);
    process.stdout.write(`same-database mode: the permit was past its end and the skew bound ${lapsedAfterMs} ms into node-a's freeze; its late write refused; late writes: 0\n`);
  }, 60_000);

  it('control, the fence alone: no newer holder raised it, and the late write lands', async () => {
    const { history } = await scenario(false);
    expect(lateWrites(readHistory(history)).length).toBe(1);
  }, 60_000);
});
