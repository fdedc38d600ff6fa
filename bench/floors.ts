/*
 * The floor rows of npm run bench: what the stores themselves answer in, with nothing of ours or of a baseline's
 * library on the path, so a decision row can be read against the fastest call it could possibly be. On the bench's
 * member, a warm client of its own: a map `get`, `set` and `replaceIfSame` (the compare-and-set a grant or refresh
 * is built on), sequential like the decision rows, and `set` throughput with 16 calls in flight (the task rows'
 * submitter keeps 16 in flight too). On the bench's Redis, the same with GET, SET and a Lua compare-and-set script
 * of the kind redlock runs to extend a lock (check the value, then set it with a TTL).
 */
import { randomUUID } from 'node:crypto';
import { Client, type ClientConfig } from 'hazelcast-client';
import Redis from 'ioredis';
import { writtenByOthers } from '../lib/backends/hazelcast/hazelcast-record-map';
import { decideAcquire } from '../lib/permits/permit.rules';
import { decodeEntry, encodeEntry, writeIdOf } from '../lib/permits/semaphore-entry.codec';
import { percentile, round, timed, type BenchRow } from './bench-stats';
import { cpuWindow, type CpuParts } from './proc-cpu';

const IN_FLIGHT = 16;
const WARMUP = 2_000;
/** A value the size of a small lock record, so the floors move bytes like the systems they bound. */
const value = (i: number) => JSON.stringify({ holder: `floor-${i % 2}`, expiresAt: 1_800_000_000_000 + i, token: i });
const CAS_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return 0 end";

/** The operations of one store, each a single round trip. */
interface Raw {
  get(key: string): Promise<unknown>;
  set(key: string, value: string): Promise<unknown>;
  /** True when `key` held `expected` and now holds `next`. */
  cas(key: string, expected: string, next: string): Promise<boolean>;
  close(): Promise<void>;
}

async function hazelcastRaw(config: ClientConfig, mapName: string): Promise<Raw> {
  const client = await Client.newHazelcastClient(config);
  const map = await client.getMap<string, string>(mapName);
  return {
    get: (key) => map.get(key),
    set: (key, v) => map.set(key, v),
    cas: (key, expected, next) => map.replaceIfSame(key, expected, next),
    close: () => client.shutdown(),
  };
}

async function redisRaw(port: number): Promise<Raw> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  await redis.connect();
  // EVALSHA after the first call, as redlock's scripts run.
  redis.defineCommand('floorCas', { numberOfKeys: 1, lua: CAS_SCRIPT });
  const cas = (redis as unknown as { floorCas(key: string, expected: string, next: string, ttl: number): Promise<unknown> }).floorCas.bind(redis);
  return {
    get: (key) => redis.get(key),
    set: (key, v) => redis.set(key, v),
    cas: async (key, expected, next) => (await cas(key, expected, next, 60_000)) === 'OK',
    close: async () => {
      redis.disconnect();
    },
  };
}

async function rowsOf(system: 'hazelcast-raw' | 'redis-raw', raw: Raw, prefix: string, count: number, procs: CpuParts, log: (line: string) => void): Promise<BenchRow[]> {
  const store = system === 'hazelcast-raw' ? 'member' : 'redis';
  const key = `${prefix}-k`;
  let current = value(0);
  await raw.set(key, current);
  let casFailures = 0;
  const casOnce = async (i: number) => {
    const next = value(i + 1);
    if (await raw.cas(key, current, next)) current = next;
    else casFailures++;
  };
  for (let i = 0; i < WARMUP; i++) {
    await raw.get(key);
    await raw.set(`${prefix}-w${i % 50}`, value(i));
    await casOnce(i);
  }
  const rows: BenchRow[] = [];
  const base = { system, nodes: 1, semaphores: 0, storeOpsPerTick: null, exactlyOncePct: null } as const;
  const measure = async (scenario: BenchRow['scenario'], op: (i: number) => Promise<unknown>) => {
    const cpu = cpuWindow(procs);
    const samples = await timed(count, op);
    const used = cpu.stop();
    const total = samples.reduce((a, b) => a + b, 0);
    rows.push({
      ...base, scenario, runs: count, p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)),
      opsPerSec: round(count / (total / 1000), 0), roundTripsPerDecision: 1, processCpuMs: used,
      cpuMsPer: used.bench === null || used[store] === null ? null : { unit: 'call', clients: round(used.bench / count, 4)!, store: round(used[store]! / count, 4)!, total: round((used.bench + used[store]!) / count, 4)! },
    });
  };
  await measure('floor-get', () => raw.get(key));
  await measure('floor-set', (i) => raw.set(`${prefix}-s${i}`, value(i)));
  casFailures = 0;
  await measure('floor-cas', (i) => casOnce(WARMUP + i));
  // Every compare-and-set here follows the last one on the same client, so each must succeed: a failure means the
  // floor measured something else than a successful swap.
  if (casFailures > 0) throw new Error(`${system}: ${casFailures} of ${count} floor compare-and-set calls failed`);

  const calls = count * 5;
  let next = 0;
  const cpu = cpuWindow(procs);
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < calls) {
      const i = next++;
      await raw.set(`${prefix}-t${i}`, value(i));
    }
  }));
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  const used = cpu.stop();
  rows.push({
    ...base, scenario: 'floor-set-throughput', runs: calls, p50Ms: null, p99Ms: null, opsPerSec: round(calls / (elapsedMs / 1000), 0), roundTripsPerDecision: 1,
    processCpuMs: used, cpuMsPer: used.bench === null || used[store] === null ? null : { unit: 'call', clients: round(used.bench / calls, 4)!, store: round(used[store]! / calls, 4)!, total: round((used.bench + used[store]!) / calls, 4)! },
  });
  const [get, , cas, thr] = rows;
  log(`  ${system}: get p50 ${get.p50Ms} / p99 ${get.p99Ms} ms, compare-and-set p50 ${cas.p50Ms} / p99 ${cas.p99Ms} ms, set with ${IN_FLIGHT} in flight ${thr.opsPerSec}/s`);
  return rows;
}

/**
 * A grant's write with no code of ours on the writer's path: a raw `replaceIfSame` of a real semaphore entry (what
 * a grant writes, decided before the clock starts, with this writer's mark) on the bench's semaphore map, one
 * distinct name per call as the grant row's are, with the listeners a node's view registers (this client's own, which leaves out the values it wrote, and one
 * for removals). `listening` is the decision rows' other node, a process of its own whose view is sent every write
 * and handles it as a replica does: on this machine's two cores its work competes with the writer and the member,
 * as it does in the grant rows. Against this row a decision shows what our code adds on the writer's path; against
 * the bare `floor-cas` (one key, nobody listening) what the whole system adds. Run after the holder closed, so no
 * view in the bench process handles these writes.
 */
export async function listenedFloorRow(config: ClientConfig, mapName: string, names: readonly string[], warmNames: readonly string[], procs: CpuParts, listening: number | undefined): Promise<BenchRow> {
  const client = await Client.newHazelcastClient(config);
  try {
    const map = await client.getMap<string, string>(mapName);
    let heard = 0;
    const writer = randomUUID();
    await map.addEntryListenerWithPredicate({ added: (e) => (heard += e.value.length), updated: (e) => (heard += e.value.length) }, writtenByOthers(writer), undefined, true);
    await map.addEntryListener({ removed: () => heard++ }, undefined, false);
    const current = new Map<string, string>();
    for (const name of [...names, ...warmNames]) {
      const raw = await map.get(name);
      if (raw === null) throw new Error(`listened floor: semaphore ${name} is not defined`);
      current.set(name, raw);
    }
    let writes = 0;
    // What a grant writes, decided by the library's own rule for a holder of this writer's (a warm-up name already
    // held by it is refreshed, as a refresh writes).
    const holder = { group: 'default', acquirer: 'floor', instance: writer };
    const nextOf = (name: string) => {
      const entry = decodeEntry(name, current.get(name)!);
      const decision = decideAcquire(entry, holder, Date.now());
      if (decision.outcome === 'denied') throw new Error(`listened floor: ${name} was not granted (${decision.reason})`);
      return encodeEntry({ ...entry, ...decision.next, revision: entry.revision + 1, writeId: writeIdOf(writer, ++writes) });
    };
    const cas = async (name: string, next: string) => {
      if (!(await map.replaceIfSame(name, current.get(name)!, next))) throw new Error(`listened floor: compare-and-set of ${name} failed`);
      current.set(name, next);
    };
    for (let i = 0; i < WARMUP; i++) {
      const name = warmNames[i % warmNames.length];
      await cas(name, nextOf(name));
    }
    // The values are encoded before the clock starts: the row times the write alone.
    const nexts = names.map(nextOf);
    const cpu = cpuWindow({ ...procs, ...(listening !== undefined && { workers: [listening] }) });
    const samples = await timed(names.length, (i) => cas(names[i], nexts[i]));
    const used = cpu.stop();
    if (heard !== 0) throw new Error(`listened floor: the writer was sent its own writes (${heard} characters)`);
    const count = names.length;
    const total = samples.reduce((a, b) => a + b, 0);
    const clients = used.bench === null ? null : used.bench + (used.workers ?? 0);
    return {
      system: 'hazelcast-raw', scenario: 'floor-cas-listened', nodes: 1, semaphores: 0, storeOpsPerTick: null, exactlyOncePct: null, runs: count,
      p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)), opsPerSec: round(count / (total / 1000), 0), roundTripsPerDecision: 1, processCpuMs: used,
      cpuMsPer: clients === null || used.member === null ? null : { unit: 'call', clients: round(clients / count, 4)!, store: round(used.member / count, 4)!, total: round((clients + used.member) / count, 4)! },
    };
  } finally {
    await client.shutdown();
  }
}

/** Every floor row: the member's, and Redis's when the run has one. */
export async function floorRows(config: ClientConfig, mapName: string, redisPort: number | undefined, count: number, procs: CpuParts, log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const hz = await hazelcastRaw(config, mapName);
  try {
    rows.push(...(await rowsOf('hazelcast-raw', hz, 'f', count, procs, log)));
  } finally {
    await hz.close();
  }
  if (redisPort !== undefined) {
    const redis = await redisRaw(redisPort);
    try {
      rows.push(...(await rowsOf('redis-raw', redis, 'f', count, procs, log)));
    } finally {
      await redis.close();
    }
  }
  return rows;
}

/** The raw Redis floor rows alone (the redis group, on the bench's Redis without a member). */
export async function redisFloorRows(redisPort: number, count: number, procs: CpuParts, log: (line: string) => void): Promise<BenchRow[]> {
  const redis = await redisRaw(redisPort);
  try {
    return await rowsOf('redis-raw', redis, 'f', count, procs, log);
  } finally {
    await redis.close();
  }
}
