/*
 * The idle-cluster rows of npm run bench (issue 50): what a quiet cluster costs its store, per node and per second,
 * with every capability on at the module's defaults (bench/idle-node.ts: a cron singleton ticking every second,
 * an election, an allocation, a task handler with no tasks, a runtime schedule, run history, presence, run-now
 * requests), at 3 and 12 node processes, on each backend the run has. Counted twice: by every node's own store-call
 * hook (what the library sends, by capability), and by the server where it can say (Redis: commands processed;
 * PostgreSQL: transactions committed or rolled back in the database), which also sees what no map call reports.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { Client as PgClient } from 'pg';
import { PostgresBackend, RedisBackend } from '../lib';
import { startApp, type AppProcess } from '../test/support/app-process';
import { eventually } from '../test/support/eventually';
import { round, type BenchRow } from './bench-stats';

const NODE_SCRIPT = join(__dirname, 'idle-node.ts');
/** Long enough for every capability's slowest background period at the defaults (presence 5 s, history 10 s). */
const WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_MS ?? 30_000);
/** After the last node is up: the election, the allocation's rebalance and the first history flush settle. */
const SETTLE_MS = Number(process.env.BENCH_IDLE_SETTLE_MS ?? 15_000);
/** Node processes started at once (each boots a Nest app: more at once only queue for the two cores). */
const START_BATCH = 3;

/** One backend the idle rows run on: the nodes' environment, and the server's own count of what it was asked. */
export interface IdleTarget {
  readonly system: BenchRow['system'];
  /** Environment of every node (GATEKEEPER_BACKEND and the server's address); a fresh MAP_PREFIX is added per row. */
  readonly env: NodeJS.ProcessEnv;
  /** Declares the prefix new, so its first grants wait no recovery. */
  declare(prefix: string): Promise<void>;
  /** The server's running count of calls (commands, transactions), or undefined where the server cannot say. */
  serverCount?(): Promise<number>;
  /** What `serverCount` counts, for the log. */
  readonly serverUnit?: string;
}

type Calls = Record<string, number>;

/** The node's store calls so far, by capability: asks with SIGUSR2 and reads the answer it prints. */
async function callsOf(node: AppProcess): Promise<{ calls: Calls; sent: Calls }> {
  // Whole lines only: a line still being written has no newline yet.
  const printed = () => node.output().split('\n').slice(0, -1).filter((l) => l.startsWith('CALLS '));
  const before = printed().length;
  node.child.kill('SIGUSR2');
  const line = await eventually(`${node.name} to print its calls`, () => printed()[before], { timeoutMs: 10_000, intervalMs: 20 });
  // The map calls' keys are capability names (no spaces); the commands' are not.
  const [, calls, sent] = /^CALLS \d+ (\{[^ ]*\}) (\{.*\})$/.exec(line)!;
  return { calls: JSON.parse(calls) as Calls, sent: JSON.parse(sent) as Calls };
}

function difference(after: Calls, before: Calls): Calls {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

function sum(calls: Calls[]): Calls {
  const total: Calls = {};
  for (const c of calls) for (const [k, v] of Object.entries(c)) total[k] = (total[k] ?? 0) + v;
  return total;
}

/** The idle rows of `target` at each of `sizes` nodes. */
export async function idleRows(target: IdleTarget, sizes: readonly number[], log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const prefix = `idle-${size}-${Date.now()}`;
    await target.declare(prefix);
    const nodes: AppProcess[] = [];
    try {
      for (let i = 0; i < size; i += START_BATCH) {
        const batch = Array.from({ length: Math.min(START_BATCH, size - i) }, (_, j) => `idle-${i + j}`);
        nodes.push(...(await Promise.all(batch.map((name) => startApp(NODE_SCRIPT, name, { ...target.env, MAP_PREFIX: prefix, LIFETIME_MS: String(10 * 60_000) })))));
      }
      await sleep(SETTLE_MS);
      const before = await Promise.all(nodes.map(callsOf));
      const serverBefore = await target.serverCount?.();
      const started = Date.now();
      await sleep(WINDOW_MS);
      const serverAfter = await target.serverCount?.();
      const after = await Promise.all(nodes.map(callsOf));
      const seconds = (Date.now() - started) / 1000;
      const perNodeSecond = (c: Calls): Calls => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, round(v / size / seconds, 3)!]).filter(([, v]) => v !== 0));
      const byStore = perNodeSecond(difference(sum(after.map((a) => a.calls)), sum(before.map((b) => b.calls))));
      const byCommand = perNodeSecond(difference(sum(after.map((a) => a.sent)), sum(before.map((b) => b.sent))));
      const total = (c: Record<string, number>) => round(Object.values(c).reduce((a, b) => a + b, 0), 3)!;
      const server = serverBefore !== undefined && serverAfter !== undefined ? round((serverAfter - serverBefore) / size / seconds, 3) : null;
      // Round trips: what the clients sent where they can be counted (Redis, PostgreSQL), else the store-call hook's.
      const sentPerNode = Object.keys(byCommand).length > 0 ? total(byCommand) : total(byStore);
      rows.push({
        scenario: 'idle-cluster', system: target.system, nodes: size, semaphores: 1, runs: 0,
        p50Ms: null, p99Ms: null, opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
        idle: { roundTripsPerNodePerSec: sentPerNode, storeCallsPerNodePerSec: total(byStore), serverCallsPerNodePerSec: server, serverUnit: target.serverUnit ?? null, byStore, byCommand, windowS: round(seconds, 1)! },
      });
      log(`  ${target.system}, ${size} nodes: ${sentPerNode} round trips per node per second; map calls by capability ${JSON.stringify(byStore)}`
        + (server !== null ? `; the server counted ${server} ${target.serverUnit} per node per second` : ''));
      if (Object.keys(byCommand).length > 0) log(`    by command: ${Object.entries(byCommand).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`).join('; ')}`);
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  }
  return rows;
}

/** The Hazelcast target: the bench's member, declared new once by the bench (the server has no count to read). */
export function hazelcastIdleTarget(cluster: { clusterName: string; addresses: readonly string[] }): IdleTarget {
  return {
    system: 'gatekeeper',
    env: { GATEKEEPER_BACKEND: 'hazelcast', GATEKEEPER_HZ_CLUSTER_NAME: cluster.clusterName, GATEKEEPER_HZ_MEMBERS: cluster.addresses.join(',') },
    declare: async () => undefined,
  };
}

/** The PostgreSQL target: each row's prefix declared new; the server counts the database's transactions. */
export function postgresIdleTarget(url: string): IdleTarget {
  return {
    system: 'gatekeeper-postgres',
    env: { GATEKEEPER_BACKEND: 'postgres', GATEKEEPER_PG_URL: url },
    serverUnit: 'transactions',
    declare: (prefix) => new PostgresBackend({ connectionString: url, mapPrefix: prefix }).declareNew().then(() => undefined),
    serverCount: async () => {
      const client = new PgClient({ connectionString: url });
      await client.connect();
      try {
        // The statistics are flushed about once a second: long windows only.
        const { rows } = await client.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
        return Number(rows[0].n);
      } finally {
        await client.end();
      }
    },
  };
}

/** The Redis target: each row's prefix declared new; the server counts the commands it processed. */
export function redisIdleTarget(url: string): IdleTarget {
  return {
    system: 'gatekeeper-redis',
    env: { GATEKEEPER_BACKEND: 'redis', GATEKEEPER_REDIS_URL: url },
    serverUnit: 'commands',
    declare: (prefix) => new RedisBackend({ url, mapPrefix: prefix }).declareNew().then(() => undefined),
    serverCount: async () => {
      const redis = new Redis(url, { lazyConnect: true });
      await redis.connect();
      try {
        return Number(/^total_commands_processed:(\d+)/m.exec(await redis.info('stats'))?.[1] ?? NaN);
      } finally {
        redis.disconnect();
      }
    },
  };
}
