import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPool as mysqlPool } from 'mysql2/promise';
import { Pool } from 'pg';
import { fenceTableSql } from '../../lib/fencing';
import { permitLossSql } from '../../lib/fencing/fence-sql';
import { newHistoryFile } from '../harness/fault-cluster';
import { commitsAfterTakeover, historyAndRowsDisagree, lateWrites, recordJobRuns, recordLapsed, recordResourceRows, staleWrites, type FencedWriteEvent, type JobRunsEvent } from '../harness/fenced-writes';
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
describe.each(([
  { dialect: 'postgres', store: { postgresUrl: testPostgresUrl() }, kind: 'permit', fault: 'freeze' },
  { dialect: 'mysql', store: { redisUrl: testRedisUrl() }, kind: 'permit', fault: 'freeze' },
  { dialect: 'http', store: { postgresUrl: testPostgresUrl() }, kind: 'permit', fault: 'freeze' },
  { dialect: 'postgres', store: { redisUrl: testRedisUrl() }, kind: 'leader', fault: 'freeze' },
  { dialect: 'postgres', store: { postgresUrl: testPostgresUrl() }, kind: 'task', fault: 'freeze' },
  { dialect: 'postgres', store: { redisUrl: testRedisUrl() }, kind: 'permit', fault: 'partition' },
  // The holder catches the refusal and commits anyway: nothing of its transaction may land.
  { dialect: 'postgres', store: { redisUrl: testRedisUrl() }, kind: 'permit', fault: 'freeze', caught: true },
  { dialect: 'mysql', store: { redisUrl: testRedisUrl() }, kind: 'permit', fault: 'freeze', caught: true },
] as ReadonlyArray<{ dialect: Dialect; store: StoreTarget; kind: 'permit' | 'leader' | 'task'; fault: 'freeze' | 'partition'; caught?: boolean }>).map((row) => ({ caught: false, ...row })))('a holder under a $kind, its fault $fault before its write, on $dialect (refusal caught: $caught)', ({ dialect, store, kind, fault, caught }) => {
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
    const base = { HISTORY_FILE: history, MAP_PREFIX: uniquePrefix('fenced'), DATA_DIALECT: dialect, LEASE_KIND: kind, FENCE: fenced ? '1' : '0', CATCH: caught ? '1' : '0', ...env, ...storeTargetEnv(store) };
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
    if (caught) expect(a).toMatchObject({ caught: true });
    process.stdout.write(`fenced writes on ${dialect} under a ${kind}: node-a ${fault === 'partition' ? 'cut off' : 'frozen'} ${frozenMs} ms before its write (lease ${LEASE_MS} ms); node-b wrote with token ${b.token}; node-a's write with token ${a.token} refused${caught ? ', caught, and its transaction committed anyway: nothing of it landed' : ''}; stale writes: 0\n`);
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
 * Same-database mode: the permits live in the PostgreSQL database the write goes to. Holder A is frozen until its
 * permit ran out by the database's clock, with nobody else granted; thawed, it goes on and commits. It is frozen at
 * each point between its check and its commit: just before its write (after checking its lease), inside the fence
 * (between same-database mode's check of the permit and the raise of the fence row), and after the fence, before its
 * `COMMIT`. With `checkLease` the transaction is refused: by the fence's check (`LeaseLostError`) or by the fence
 * table's check at `COMMIT` (SQLSTATE GK001). The control fences the token alone, which no newer holder raised, and
 * the late write lands.
 */
describe('a holder frozen past its lease with nobody after it, permits in the same PostgreSQL database', () => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
  });

  const PAUSED: Record<string, FencedWriteEvent['phase']> = { 'before-write': 'checked', 'inside-fence': 'fencing', 'after-fence': 'fenced' };

  async function scenario(checkLease: boolean, pauseAt: 'before-write' | 'inside-fence' | 'after-fence'): Promise<{ history: string; lapsedAfterMs: number }> {
    const label = `same_db_${checkLease ? 'on' : 'off'}_${pauseAt.replace('-', '_')}`;
    const history = newHistoryFile(label);
    const url = await freshDatabase('postgres', `${label}_${Date.now().toString(36)}`, ['CREATE TABLE ledger (id serial PRIMARY KEY, node text NOT NULL, token bigint NOT NULL)', fenceTableSql('postgres')]);
    const mapPrefix = uniquePrefix('same-db');
    const go = `${history}.go-a`;
    const a = await startNodeProcess(SCRIPT, 'node-a', {
      HISTORY_FILE: history, MAP_PREFIX: mapPrefix, DATA_DIALECT: 'postgres', DATA_URL: url, FENCE: '1', CHECK_LEASE: checkLease ? '1' : '0', GO_FILE: go, PAUSE_AT: pauseAt,
      ...storeTargetEnv({ postgresUrl: url }),
    }, history);
    nodes.push(a);
    const paused = await eventually(`node-a to pause at its ${PAUSED[pauseAt]} write`, () => writes(history).find((e) => e.phase === PAUSED[pauseAt]), { timeoutMs: 20_000, intervalMs: 20 });
    a.freeze();
    const frozenAt = Date.now();
    // The permit's end, as the database tells it (the same check same-database mode makes), and the skew bound after
    // it: until then the holder's keep-alive may still refresh the permit (nobody else may take it), and holds it again.
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      await eventually('the permit to run out by the database\'s clock, past the skew bound', async () => {
        const { rows } = await pool.query(permitLossSql('gatekeeper'), [`${mapPrefix}.semaphores`, 'ledger', paused.token]);
        return rows[0].reason !== null && (rows[0].left_ms === null || Number(rows[0].left_ms) < -SKEW_MS);
      }, { timeoutMs: 4 * LEASE_MS, intervalMs: 50 });
    } finally {
      await pool.end();
    }
    recordLapsed(history, paused.token);
    const lapsedAfterMs = Date.now() - frozenAt;
    writeFileSync(go, '');
    a.resume();
    await eventually('node-a to finish its write', () => writes(history).find((e) => e.phase === 'committed' || e.phase === 'refused'), { timeoutMs: 20_000, intervalMs: 20 });
    return { history, lapsedAfterMs };
  }

  it.each([
    ['before-write', 'lease lost'],
    ['inside-fence', 'lease lost at COMMIT'],
    ['after-fence', 'lease lost at COMMIT'],
  ] as const)('with checkLease, frozen %s: the late write is refused on the database\'s clock (%s)', async (pauseAt, cause) => {
    const { history, lapsedAfterMs } = await scenario(true, pauseAt);
    expect(writes(history).find((e) => e.phase === 'committed' || e.phase === 'refused')).toMatchObject({ phase: 'refused', cause });
    expect(lateWrites(readHistory(history))).toEqual([]);
    process.stdout.write(`same-database mode, node-a frozen ${pauseAt}: the permit was past its end and the skew bound ${lapsedAfterMs} ms into the freeze; its late write refused (${cause}); late writes: 0\n`);
  }, 60_000);

  it.each(['before-write', 'after-fence'] as const)('control, the fence alone, frozen %s: no newer holder raised it, and the late write lands', async (pauseAt) => {
    const { history } = await scenario(false, pauseAt);
    expect(lateWrites(readHistory(history)).length).toBe(1);
  }, 60_000);
});

/**
 * A newer holder behind an older one frozen between its fence and its `COMMIT`, on PostgreSQL (permits on Redis):
 * A fences (`maxIdle` 3 s) and is frozen holding the fence row; B is granted once A's permit ran out and fences the
 * same resource, which waits for A's transaction. The server ends A's transaction 3 s after its fence: B then goes on
 * and commits, and A, thawed later, commits nothing. The checker reads only the history: no write committed by a
 * holder after a newer one was granted, B's wait within its bound, the resource in token order. The control fences
 * without `maxIdle` (the default): A, thawed while B waits (within B's `maxWait`), commits its older write after B was
 * granted.
 */
describe('a newer holder behind an older one frozen between its fence and its COMMIT, on PostgreSQL', () => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
  });
  const MAX_IDLE_MS = 3_000;
  const MAX_WAIT_MS = 5_000;

  /** `maxIdle`: A's transaction ended by the server; `checkLease`: same-database mode (permits in this database); `plain`: neither. */
  async function scenario(mode: 'maxIdle' | 'checkLease' | 'plain'): Promise<{ history: string; frozenMs: number }> {
    const label = `frozen_holder_${mode.toLowerCase()}`;
    const history = newHistoryFile(label);
    const url = await freshDatabase('postgres', `${label}_${Date.now().toString(36)}`, ['CREATE TABLE ledger (id serial PRIMARY KEY, node text NOT NULL, token bigint NOT NULL)', fenceTableSql('postgres')]);
    const base = {
      HISTORY_FILE: history, MAP_PREFIX: uniquePrefix('frozen-holder'), DATA_DIALECT: 'postgres', DATA_URL: url, FENCE: '1', PAUSE_AT: 'after-fence',
      MAX_WAIT: String(MAX_WAIT_MS), ...(mode === 'maxIdle' ? { MAX_IDLE: String(MAX_IDLE_MS) } : {}), CHECK_LEASE: mode === 'checkLease' ? '1' : '0',
      ...storeTargetEnv(mode === 'checkLease' ? { postgresUrl: url } : { redisUrl: testRedisUrl() }),
    };
    const goB = `${history}.go-b`;
    writeFileSync(goB, '');
    const a = await startNodeProcess(SCRIPT, 'node-a', { ...base, GO_FILE: `${history}.go-a` }, history);
    nodes.push(a);
    await eventually('node-a to fence', () => writes(history).find((e) => e.node === 'node-a' && e.phase === 'fenced'), { timeoutMs: 20_000, intervalMs: 20 });
    a.freeze();
    const frozenAt = Date.now();
    const b = await startNodeProcess(SCRIPT, 'node-b', { ...base, GO_FILE: goB }, history);
    nodes.push(b);
    await eventually('node-b to be granted the permit', () => writes(history).find((e) => e.node === 'node-b' && e.phase === 'checked'), { timeoutMs: 4 * LEASE_MS + 10_000, intervalMs: 20 });
    // A stays frozen 1.5 s more: past its idle bound (3 s after its fence, B granted 2.2 s after it at the earliest).
    await sleep(1_500);
    writeFileSync(`${history}.go-a`, '');
    a.resume();
    const frozenMs = Date.now() - frozenAt;
    await eventually('both holders to finish', () => ['node-a', 'node-b'].every((node) => writes(history).some((e) => e.node === node && (e.phase === 'committed' || e.phase === 'refused'))), { timeoutMs: 20_000, intervalMs: 20 });
    recordResourceRows(history, 'ledger', await ledgerRows('postgres', url));
    return { history, frozenMs };
  }

  /**
   * The checker's verdict on a run where the older holder must fail: its write refused for `cause`, the newer one's
   * committed, no commit after a takeover, the resource in token order. Answers the newer holder's `fenced` event.
   */
  function olderRefusedNewerCommitted(history: string, cause: string): FencedWriteEvent {
    const events = writes(history);
    expect(events.find((e) => e.node === 'node-a' && (e.phase === 'committed' || e.phase === 'refused'))).toMatchObject({ phase: 'refused', cause });
    expect(events.find((e) => e.node === 'node-b' && e.phase === 'committed')).toBeDefined();
    expect(commitsAfterTakeover(readHistory(history))).toEqual([]);
    expect(staleWrites(readHistory(history))).toEqual([]);
    return events.find((e) => e.node === 'node-b' && e.phase === 'fenced')!;
  }

  it('with maxIdle: the server ends the frozen holder\'s transaction, the newer one waits at most its bound and commits, the older commits nothing', async () => {
    const { history, frozenMs } = await scenario('maxIdle');
    const bFenced = olderRefusedNewerCommitted(history, 'transaction ended by the server');
    expect(bFenced.waitedMs).toBeLessThan(MAX_IDLE_MS);
    process.stdout.write(`frozen older holder (maxIdle ${MAX_IDLE_MS} ms): node-a frozen ${frozenMs} ms after its fence; node-b's fence waited ${bFenced.waitedMs} ms, then committed; node-a's transaction ended by the server; commits after a takeover: 0\n`);
  }, 90_000);

  it('in same-database mode: the frozen holder, thawed while the newer waits, is refused at COMMIT, and the newer commits', async () => {
    const { history, frozenMs } = await scenario('checkLease');
    const bFenced = olderRefusedNewerCommitted(history, 'lease lost at COMMIT');
    process.stdout.write(`frozen older holder, same-database mode: node-a frozen ${frozenMs} ms after its fence; node-b's fence waited ${bFenced.waitedMs} ms for node-a's COMMIT, refused; commits after a takeover: 0\n`);
  }, 90_000);

  it('control, the fence alone without maxIdle: the older holder, thawed while the newer waits, commits after the newer was granted', async () => {
    const { history } = await scenario('plain');
    const late = commitsAfterTakeover(readHistory(history));
    expect(late.length).toBe(1);
    expect(late[0]).toMatchObject({ node: 'node-a' });
    process.stdout.write(`frozen older holder, control without maxIdle: node-a committed token ${late[0].token} after node-b was granted\n`);
  }, 90_000);
});

/**
 * A task handler whose writes commit with its completion (`context.completeIn`, tasks and data in one PostgreSQL
 * database): holder A claims the task, inserts its row in a transaction and is frozen there, before `completeIn`
 * (its claim then lapses and B claims and runs the task) or after it, before its `COMMIT` (the task's row is locked
 * by A's transaction: nobody can claim it meanwhile); A is thawed once B ran or after twice the lease. The checker
 * reads the ledger: the task's effects landed exactly once. The control commits the handler's insert on its own and
 * completes the task after the handler returns, A frozen in between: B runs it again, and its effects land twice.
 */
describe('a transactional task handler frozen after its writes, on PostgreSQL', () => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
  });

  async function scenario(mode: 'complete-in' | 'own-commit', pauseAt: 'before-complete' | 'after-complete' | 'after-commit', maxIdleMs?: number): Promise<{ history: string; rows: Array<{ node: string; token: number }> }> {
    const label = `tx_task_${mode.replace('-', '_')}_${pauseAt.replace('-', '_')}${maxIdleMs === undefined ? '' : '_idle'}`;
    const history = newHistoryFile(label);
    const url = await freshDatabase('postgres', `${label}_${Date.now().toString(36)}`, ['CREATE TABLE ledger (id serial PRIMARY KEY, node text NOT NULL, token bigint NOT NULL)']);
    const base = { HISTORY_FILE: history, MAP_PREFIX: uniquePrefix('tx-task'), DATA_DIALECT: 'postgres', DATA_URL: url, LEASE_KIND: 'task', TASK_MODE: mode, PAUSE_AT: pauseAt, ...(maxIdleMs === undefined ? {} : { MAX_IDLE: String(maxIdleMs) }), ...storeTargetEnv({ postgresUrl: url }) };
    const goB = `${history}.go-b`;
    writeFileSync(goB, '');
    const a = await startNodeProcess(SCRIPT, 'node-a', { ...base, GO_FILE: `${history}.go-a` }, history);
    nodes.push(a);
    const phase = pauseAt === 'before-complete' ? 'fencing' : 'fenced';
    await eventually(`node-a to pause at ${pauseAt}`, () => writes(history).find((e) => e.node === 'node-a' && e.phase === phase), { timeoutMs: 20_000, intervalMs: 20 });
    a.freeze();
    const b = await startNodeProcess(SCRIPT, 'node-b', { ...base, GO_FILE: goB }, history);
    nodes.push(b);
    // B runs the task once A's claim lapsed; unless A's transaction holds the task's row (A completed in it): then
    // nobody can claim the task while A is frozen, and the freeze is held for twice the lease, B not running it.
    const bRan = () => writes(history).some((e) => e.node === 'node-b' && (e.phase === 'committed' || e.phase === 'refused'));
    if (pauseAt === 'after-complete' && maxIdleMs === undefined) {
      await sleep(2 * LEASE_MS);
      expect(bRan()).toBe(false);
    } else {
      await eventually('node-b to run the task', bRan, { timeoutMs: 4 * LEASE_MS + 10_000, intervalMs: 50 });
    }
    writeFileSync(`${history}.go-a`, '');
    a.resume();
    await eventually('node-a to finish', () => writes(history).some((e) => e.node === 'node-a' && (e.phase === 'committed' || e.phase === 'refused')) || pauseAt === 'after-commit', { timeoutMs: 20_000, intervalMs: 20 });
    // Every run's end is told before the rows are read: the task done, once.
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      await eventually('the task to be done', async () => {
        const { rows } = await pool.query("SELECT value FROM gatekeeper.tasks WHERE value::jsonb ->> 'state' = 'done'");
        return rows.length === 1;
      }, { timeoutMs: 20_000, intervalMs: 50 });
    } finally {
      await pool.end();
    }
    const rows = await ledgerRows('postgres', url);
    recordResourceRows(history, 'ledger', rows);
    return { history, rows };
  }

  it.each(['before-complete', 'after-complete'] as const)('completed in its transaction, frozen %s: its effects land exactly once', async (pauseAt) => {
    const { history, rows } = await scenario('complete-in', pauseAt);
    expect(rows.length).toBe(1);
    const a = writes(history).find((e) => e.node === 'node-a' && (e.phase === 'committed' || e.phase === 'refused'))!;
    if (pauseAt === 'before-complete') expect(a).toMatchObject({ phase: 'refused', cause: 'lease lost' });
    else expect(a).toMatchObject({ phase: 'committed' });
    process.stdout.write(`transactional task handler frozen ${pauseAt}: node-a's run ${a.phase}; the ledger holds ${rows.length} row (${rows.map((r) => r.node).join(', ')})\n`);
  }, 90_000);

  it('completed in its transaction with maxIdle, frozen after completeIn: the server ends it, another node runs the task, once', async () => {
    const { history, rows } = await scenario('complete-in', 'after-complete', 1_500);
    expect(rows).toEqual([expect.objectContaining({ node: 'node-b' })]);
    const a = writes(history).find((e) => e.node === 'node-a' && (e.phase === 'committed' || e.phase === 'refused'))!;
    expect(a).toMatchObject({ phase: 'refused', cause: 'transaction ended by the server' });
    process.stdout.write(`transactional task handler frozen after completeIn, maxIdle 1500 ms: node-a's transaction ended by the server; node-b ran the task; the ledger holds ${rows.length} row (${rows.map((r) => r.node).join(', ')})\n`);
  }, 90_000);

  it('control, completed after the handler returns, frozen between its commit and its return: its effects land twice', async () => {
    const { rows } = await scenario('own-commit', 'after-commit');
    expect(rows.length).toBe(2);
    process.stdout.write(`task handler committing on its own, frozen after its commit: the ledger holds ${rows.length} rows (${rows.map((r) => r.node).join(', ')})\n`);
  }, 90_000);
});

/**
 * A newer holder behind an older one frozen between its fence and its `COMMIT`, on MariaDB (permits on Redis), where
 * no server setting ends an idle transaction: A fences (`maxWait` 1 s) and is frozen holding the fence row; B is
 * granted once A's permit ran out and fences the same resource. B gives up with `FenceWaitTimeoutError` within its
 * bound (2 × `maxWait`, 2 s), its transaction rolled back: a clear error, no hang. A, thawed, commits its older write,
 * in token order: on MySQL and MariaDB the takeover is not seen by the fence (the documented limit). The control gives
 * B a `maxWait` of 30 s: at the same deadline it is still waiting.
 */
describe('a newer holder behind an older one frozen between its fence and its COMMIT, on MariaDB', () => {
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
  });
  const BOUND_MS = 2 * 1_000;

  async function scenario(maxWaitMs: number): Promise<{ history: string; bFinishedInTime: boolean; bWaitedMs?: number }> {
    const label = `mysql_frozen_holder_${maxWaitMs}`;
    const history = newHistoryFile(label);
    const url = await freshDatabase('mysql', `${label}_${Date.now().toString(36)}`, ['CREATE TABLE ledger (id int AUTO_INCREMENT PRIMARY KEY, node varchar(50) NOT NULL, token bigint NOT NULL)', fenceTableSql('mysql')]);
    const base = { HISTORY_FILE: history, MAP_PREFIX: uniquePrefix('mysql-frozen'), DATA_DIALECT: 'mysql', DATA_URL: url, FENCE: '1', PAUSE_AT: 'after-fence', MAX_WAIT: String(maxWaitMs), ...storeTargetEnv({ redisUrl: testRedisUrl() }) };
    const goB = `${history}.go-b`;
    writeFileSync(goB, '');
    const a = await startNodeProcess(SCRIPT, 'node-a', { ...base, GO_FILE: `${history}.go-a` }, history);
    nodes.push(a);
    await eventually('node-a to fence', () => writes(history).find((e) => e.node === 'node-a' && e.phase === 'fenced'), { timeoutMs: 20_000, intervalMs: 20 });
    a.freeze();
    const b = await startNodeProcess(SCRIPT, 'node-b', { ...base, GO_FILE: goB }, history);
    nodes.push(b);
    await eventually('node-b to be granted the permit', () => writes(history).find((e) => e.node === 'node-b' && e.phase === 'checked'), { timeoutMs: 4 * LEASE_MS + 10_000, intervalMs: 20 });
    const bEnd = () => writes(history).find((e) => e.node === 'node-b' && (e.phase === 'committed' || e.phase === 'refused'));
    // B's bound and 3 s of slack for a loaded machine.
    const bFinishedInTime = await eventually('node-b to finish its fence', () => bEnd() !== undefined, { timeoutMs: BOUND_MS + 3_000, intervalMs: 20 }).then(() => true, () => false);
    writeFileSync(`${history}.go-a`, '');
    a.resume();
    await eventually('both holders to finish', () => ['node-a', 'node-b'].every((node) => writes(history).some((e) => e.node === node && (e.phase === 'committed' || e.phase === 'refused'))), { timeoutMs: 60_000, intervalMs: 20 });
    recordResourceRows(history, 'ledger', await ledgerRows('mysql', url));
    return { history, bFinishedInTime, bWaitedMs: bEnd()?.waitedMs };
  }

  it('bounded: the newer holder gives up within 2 × maxWait with FenceWaitTimeoutError; the older commits in token order', async () => {
    const { history, bFinishedInTime, bWaitedMs } = await scenario(1_000);
    expect(bFinishedInTime).toBe(true);
    const events = writes(history);
    expect(events.find((e) => e.node === 'node-b' && e.phase === 'refused')).toMatchObject({ cause: 'wait timeout' });
    expect(bWaitedMs).toBeLessThan(BOUND_MS + 1_000);
    expect(events.find((e) => e.node === 'node-a' && e.phase === 'committed')).toBeDefined();
    expect(staleWrites(readHistory(history))).toEqual([]);
    process.stdout.write(`frozen older holder on MariaDB (maxWait 1000 ms): node-b gave up after ${bWaitedMs} ms (FenceWaitTimeoutError, rolled back); node-a, thawed, committed its older write in token order: ${commitsAfterTakeover(readHistory(history)).length} commit after the takeover (the documented limit)\n`);
  }, 90_000);

  it('control, maxWait 30 s: at the same deadline the newer holder is still waiting', async () => {
    const { bFinishedInTime } = await scenario(30_000);
    expect(bFinishedInTime).toBe(false);
  }, 120_000);
});

/**
 * A `@ClusterSingleton` run whose writes and history record commit together (`ScheduleService.completeRunIn`; permits,
 * history and data in one PostgreSQL database). A runs the job, inserts its row and records the run in its
 * transaction, and is frozen before its `COMMIT` past its lease; B is granted and runs the job; A, thawed, is refused
 * at `COMMIT` (the permit checked again there). Or A is frozen right after its `COMMIT` and killed (SIGKILL): its
 * history says what committed. The checker reads the ledger and the job's history as the store holds it: every row's
 * run is `completed`, and every completed run has its row; no write committed after a newer holder was granted. The
 * controls commit the insert alone, the run told to the history after the method returns: a holder frozen before its
 * `COMMIT` lands its write after the newer holder was granted, and one killed after its `COMMIT` leaves a row whose run
 * the history never heard ended.
 */
describe('a @ClusterSingleton run completed in its transaction, frozen before or after its COMMIT, on PostgreSQL', () => {
  const JOB = 'LedgerWriter.ledgerJob';
  const nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.terminate().catch(() => undefined)));
  });

  async function scenario(mode: 'complete-in' | 'own-commit', pauseAt: 'after-complete' | 'after-commit'): Promise<{ history: string; events: ReturnType<typeof readHistory> }> {
    const label = `tx_job_${mode.replace('-', '_')}_${pauseAt.replace('-', '_')}`;
    const history = newHistoryFile(label);
    const url = await freshDatabase('postgres', `${label}_${Date.now().toString(36)}`, ['CREATE TABLE ledger (id serial PRIMARY KEY, node text NOT NULL, token bigint NOT NULL)', fenceTableSql('postgres')]);
    const mapPrefix = uniquePrefix('tx-job');
    const base = { HISTORY_FILE: history, MAP_PREFIX: mapPrefix, DATA_DIALECT: 'postgres', DATA_URL: url, LEASE_KIND: 'job', JOB_MODE: mode, PAUSE_AT: pauseAt, ...storeTargetEnv({ postgresUrl: url }) };
    const a = await startNodeProcess(SCRIPT, 'node-a', { ...base, GO_FILE: `${history}.go-a` }, history);
    nodes.push(a);
    await eventually(`node-a to pause ${pauseAt}`, () => writes(history).find((e) => e.node === 'node-a' && e.phase === 'fenced'), { timeoutMs: 20_000, intervalMs: 20 });
    a.freeze();
    recordNemesis(history, `freeze node-a ${pauseAt}`);
    if (pauseAt === 'after-commit') {
      // Dead right after its COMMIT, before the method returned: nothing but the transaction told the history.
      await a.kill();
      recordNemesis(history, 'kill node-a');
    } else {
      const goB = `${history}.go-b`;
      writeFileSync(goB, '');
      const b = await startNodeProcess(SCRIPT, 'node-b', { ...base, GO_FILE: goB }, history);
      nodes.push(b);
      // B's run begins once A's permit ran out. Completed in its transaction, B's fence then waits behind A's open
      // one (the fence row, A's history record): A is thawed while it waits, as a GC pause would end.
      await eventually('node-b to be granted the job once node-a\'s permit ran out', () => writes(history).some((e) => e.node === 'node-b' && e.phase === 'checked'), { timeoutMs: 4 * LEASE_MS + 10_000, intervalMs: 20 });
      writeFileSync(`${history}.go-a`, '');
      a.resume();
      recordNemesis(history, 'thaw node-a');
      const ended = (node: string) => writes(history).some((e) => e.node === node && (e.phase === 'committed' || e.phase === 'refused'));
      await eventually('node-a and node-b to finish their runs', () => ended('node-a') && ended('node-b'), { timeoutMs: 20_000, intervalMs: 20 });
      // Every node tells what it knows of its runs (a node's history is written at its stop).
      await Promise.all(nodes.splice(0).map((n) => n.terminate()));
    }
    recordResourceRows(history, 'ledger', await ledgerRows('postgres', url));
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      const { rows } = await pool.query('SELECT value FROM gatekeeper.records WHERE map = $1 AND key = $2', [`${mapPrefix}.job-runs`, JOB]);
      const runs = rows.length === 0 ? [] : (JSON.parse(rows[0].value as string) as { runs: Array<{ token: number; outcome: string }> }).runs;
      recordJobRuns(history, JOB, runs.map(({ token, outcome }) => ({ token, outcome })));
    } finally {
      await pool.end();
    }
    return { history, events: readHistory(history) };
  }

  it('completed in its transaction, frozen before its COMMIT past its lease: refused at COMMIT; the history and the rows agree', async () => {
    const { history, events } = await scenario('complete-in', 'after-complete');
    expect(writes(history).find((e) => e.node === 'node-a' && (e.phase === 'committed' || e.phase === 'refused'))).toMatchObject({ phase: 'refused', cause: 'lease lost at COMMIT' });
    expect(commitsAfterTakeover(events)).toEqual([]);
    expect(historyAndRowsDisagree(events)).toEqual([]);
    const b = writes(history).find((e) => e.node === 'node-b' && e.phase === 'committed')!;
    process.stdout.write(`@ClusterSingleton run completed in its transaction, frozen before COMMIT past its lease: node-a refused at COMMIT (lease lost), node-b's run committed (token ${b.token}); history and rows agree\n`);
  }, 90_000);

  it('control, committing on its own, frozen before its COMMIT past its lease: its write lands after the newer holder was granted', async () => {
    const { events } = await scenario('own-commit', 'after-complete');
    expect(commitsAfterTakeover(events).length).toBe(1);
  }, 90_000);

  it('completed in its transaction, killed right after its COMMIT: the history says completed, as the rows do', async () => {
    const { events } = await scenario('complete-in', 'after-commit');
    expect(historyAndRowsDisagree(events)).toEqual([]);
    expect((events as unknown as JobRunsEvent[]).find((e) => e.type === 'job-runs')!.runs).toEqual([expect.objectContaining({ outcome: 'completed' })]);
  }, 90_000);

  it('control, committing on its own, killed right after its COMMIT: its row landed, the history never heard its run ended', async () => {
    const { events } = await scenario('own-commit', 'after-commit');
    expect(historyAndRowsDisagree(events)).toHaveLength(1);
  }, 90_000);
});
