/*
 * The tasks rows of npm run bench (issue 12): end-to-end throughput (submit to completed, a no-op handler) on 1 and
 * 3 worker processes, latency from submit to handler start at a steady rate, store round trips per task, the idle
 * cost per node, and how long a SIGKILLed worker's task waits before another node starts it. Every worker is a real
 * process (bench/task-node.ts); the bench process submits, through the library's own submit (gatekeeper) or
 * `Queue.add` with a job id (BullMQ, the baseline, on the bench's Redis, with the same workload and concurrency).
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { ClientConfig } from 'hazelcast-client';
import Redis from 'ioredis';
import { HazelcastConnection } from '../lib/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../lib/tasks/hazelcast-task.store';
import { systemClock } from '../lib/core/clock';
import { TaskWorker } from '../lib/tasks/task-worker';
import { startApp, type AppProcess } from '../test/support/app-process';
import { eventually } from '../test/support/eventually';
import { operationsOf } from './node-operations';
import { percentile, round, type BenchRow } from './bench-stats';

const NODE_SCRIPT = join(__dirname, 'task-node.ts');
const CONCURRENCY = 4;
const THROUGHPUT_TASKS = Number(process.env.BENCH_TASKS ?? 2000);
/** Submits in flight at once from the one submitter, for both systems. */
const IN_FLIGHT = 16;
const LATENCY_TASKS = 200;
const LATENCY_RATE_PER_S = 20;
const IDLE_WINDOW_MS = 10_000;
/** The detection row's settings: a 5 s lease and a 1 s scan (gatekeeper); BullMQ keeps its defaults (30 s lock, 30 s stalled check). */
export const DETECTION_SETTINGS = { leaseMs: 5_000, scanMs: 1_000 };

type Cluster = { clusterName: string; addresses: string[] };
type System = 'gatekeeper' | 'bullmq';

/** A submitter: the bench process's own client of each system. */
interface Submitter {
  submit(type: 'noop' | 'hang', name: string): Promise<void>;
  /** Round trips so far: store calls (gatekeeper) or Redis commands sent, a Lua script counting as one (BullMQ). */
  operations(): Promise<number>;
  close(): Promise<void>;
}

class WorkerNode {
  constructor(readonly app: AppProcess) {}

  exited(): boolean {
    return this.app.child.exitCode !== null || this.app.child.signalCode !== null;
  }

  /** Lines `<kind> <id> <ms>` printed so far, by id. */
  times(kind: 'S' | 'C'): Map<string, number> {
    const map = new Map<string, number>();
    for (const line of this.app.output().split('\n')) {
      if (!line.startsWith(`${kind} `)) continue;
      const [, id, at] = line.split(' ');
      map.set(id, Number(at));
    }
    return map;
  }

  operations(): Promise<number> {
    return operationsOf(this.app);
  }
}

async function startNodes(system: System, count: number, env: NodeJS.ProcessEnv, label: string): Promise<WorkerNode[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => new WorkerNode(await startApp(NODE_SCRIPT, `${label}-${i}`, { ...env, SYSTEM: system }))));
}

async function stopNodes(nodes: WorkerNode[]): Promise<void> {
  await Promise.all(nodes.map((n) => (n.exited() ? undefined : n.app.stop())));
}

async function gatekeeperSubmitter(config: ClientConfig, mapPrefix: string): Promise<Submitter> {
  const store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: config }), mapPrefix });
  await store.connect();
  const worker = new TaskWorker(store, { instance: 'bench/submitter', acquirer: 'bench' }, { clock: systemClock, clockSkewMs: 500 });
  return {
    submit: async (type, name) => {
      await worker.submit({ type, name });
    },
    operations: async () => store.operationCount(),
    close: () => store.close(),
  };
}

async function bullmqSubmitter(port: number): Promise<Submitter> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queue = new Queue('bench', { connection });
  // The submitter's own commands, as the nodes count theirs (a Lua script is one round trip).
  let sent = 0;
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof send>) {
    sent++;
    return send.apply(this, args);
  };
  return {
    // The job id makes the add idempotent, as the gatekeeper's id does.
    submit: async (type, name) => {
      await queue.add(type, null, { jobId: `${type}-${name}`, removeOnComplete: { count: 100_000 } });
    },
    operations: async () => sent,
    close: async () => {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      Redis.prototype.sendCommand = send;
    },
  };
}

/** Runs `count` submits with at most IN_FLIGHT at once; returns each id's submit time. */
async function submitAll(submitter: Submitter, type: 'noop', names: string[], idOf: (name: string) => string): Promise<Map<string, number>> {
  const at = new Map<string, number>();
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < names.length) {
      const name = names[next++];
      at.set(idOf(name), Date.now());
      await submitter.submit(type, name);
    }
  }));
  return at;
}

const merged = (nodes: WorkerNode[], kind: 'S' | 'C') => new Map(nodes.flatMap((n) => [...n.times(kind)]));
const nodeOps = async (nodes: WorkerNode[]) => (await Promise.all(nodes.filter((n) => !n.exited()).map((n) => n.operations()))).reduce((a, b) => a + b, 0);

/**
 * Throughput, latency, round trips and idle cost of one system on `nodeCount` worker processes, in one set of
 * processes: a burst of THROUGHPUT_TASKS, then LATENCY_TASKS at a steady rate, then an idle window.
 */
async function measure(system: System, nodeCount: number, env: NodeJS.ProcessEnv, submitter: Submitter, run: string, log: (line: string) => void): Promise<BenchRow[]> {
  // The module's default scan interval (5 s): new work is signalled, the scan only finds lapsed leases.
  const nodes = await startNodes(system, nodeCount, { ...env, SCAN_MS: '5000' }, `${system}-${nodeCount}`);
  const idOf = (name: string) => (system === 'gatekeeper' ? `noop:${name}` : `noop-${name}`);
  try {
    const names = Array.from({ length: THROUGHPUT_TASKS }, (_, i) => `${run}-t${i}`);
    const opsBefore = (await submitter.operations()) + (await nodeOps(nodes));
    const started = Date.now();
    const submitted = await submitAll(submitter, 'noop', names, idOf);
    await eventually(`${system}: ${THROUGHPUT_TASKS} tasks completed`, () => names.every((n) => merged(nodes, 'C').has(idOf(n))), { timeoutMs: 300_000, intervalMs: 50 });
    const completed = merged(nodes, 'C');
    const lastDone = Math.max(...names.map((n) => completed.get(idOf(n))!));
    const elapsedS = (lastDone - started) / 1000;
    const trips = (await submitter.operations()) + (await nodeOps(nodes)) - opsBefore;
    const tasksPerSec = round(THROUGHPUT_TASKS / elapsedS, 0);
    const throughputStart = merged(nodes, 'S');
    const burstLatency = names.map((n) => throughputStart.get(idOf(n))! - submitted.get(idOf(n))!);
    const perNode = nodes.map((node) => names.filter((n) => node.times('S').has(idOf(n))).length);
    log(`  ${system} ${nodeCount} node(s): ${THROUGHPUT_TASKS} tasks in ${round(elapsedS, 2)} s = ${tasksPerSec}/s, ${round(trips / THROUGHPUT_TASKS, 2)} store calls per task, per node ${perNode.join('/')}`);

    const steady = Array.from({ length: LATENCY_TASKS }, (_, i) => `${run}-l${i}`);
    const steadyAt = new Map<string, number>();
    for (const name of steady) {
      steadyAt.set(idOf(name), Date.now());
      await submitter.submit('noop', name);
      await sleep(1000 / LATENCY_RATE_PER_S);
    }
    await eventually(`${system}: the steady tasks started`, () => steady.every((n) => merged(nodes, 'S').has(idOf(n))), { timeoutMs: 60_000, intervalMs: 50 });
    const starts = merged(nodes, 'S');
    const latency = steady.map((n) => starts.get(idOf(n))! - steadyAt.get(idOf(n))!);
    log(`  ${system} ${nodeCount} node(s): submit to start at ${LATENCY_RATE_PER_S}/s p50 ${percentile(latency, 50)} ms, p99 ${percentile(latency, 99)} ms (in the burst: p50 ${percentile(burstLatency, 50)} ms)`);

    const idleBefore = (await submitter.operations()) + (await nodeOps(nodes));
    await sleep(IDLE_WINDOW_MS);
    const idleOps = (await submitter.operations()) + (await nodeOps(nodes)) - idleBefore;
    const idlePerNode = round(idleOps / nodeCount / (IDLE_WINDOW_MS / 1000), 2);
    log(`  ${system} ${nodeCount} node(s): idle ${idlePerNode} store calls per node per second`);
    const base = { system, nodes: nodeCount, semaphores: 0, opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null } as const;
    return [
      { ...base, scenario: 'tasks-throughput', runs: THROUGHPUT_TASKS, p50Ms: round(percentile(burstLatency, 50)), p99Ms: round(percentile(burstLatency, 99)), tasksPerSec, roundTripsPerTask: round(trips / THROUGHPUT_TASKS, 2), idleOpsPerSecPerNode: idlePerNode },
      { ...base, scenario: 'tasks-latency', runs: LATENCY_TASKS, p50Ms: round(percentile(latency, 50)), p99Ms: round(percentile(latency, 99)), tasksPerSec: LATENCY_RATE_PER_S },
    ];
  } finally {
    await stopNodes(nodes);
  }
}

/** A task whose worker is SIGKILLed while it runs it: ms until another node starts it. */
async function detection(system: System, env: NodeJS.ProcessEnv, submitter: Submitter, run: string, log: (line: string) => void): Promise<BenchRow> {
  const nodes = await startNodes(system, 2, env, `${system}-detect`);
  try {
    const name = `${run}-hang`;
    const id = system === 'gatekeeper' ? `hang:${name}` : `hang-${name}`;
    await submitter.submit('hang', name);
    const holder = await eventually(`${system}: the hang task started`, () => nodes.find((n) => n.times('S').has(id)), { timeoutMs: 30_000, intervalMs: 20 });
    holder.app.child.kill('SIGKILL');
    const killedAt = Date.now();
    const other = nodes.find((n) => n !== holder)!;
    await eventually(`${system}: the task started elsewhere`, () => other.times('S').has(id), { timeoutMs: 120_000, intervalMs: 20 });
    const detectionMs = other.times('S').get(id)! - killedAt;
    const bound = system === 'gatekeeper' ? ` (bound lease ${DETECTION_SETTINGS.leaseMs} + skew 500 + scan ${DETECTION_SETTINGS.scanMs})` : ' (defaults: 30 s lock, 30 s stalled check)';
    log(`  ${system}: a SIGKILLed worker's task started elsewhere ${detectionMs} ms after the kill${bound}`);
    return {
      scenario: 'tasks-detection', system, nodes: 2, semaphores: 0, runs: 1, p50Ms: null, p99Ms: null, opsPerSec: null, storeOpsPerTick: null,
      roundTripsPerDecision: null, exactlyOncePct: null, detectionMs,
      ...(system === 'gatekeeper' && { taskSettings: { ...DETECTION_SETTINGS, maxClockSkewMs: 500 } }),
    };
  } finally {
    await stopNodes(nodes);
  }
}

/** Every tasks row, both systems. */
export async function taskRows(cluster: Cluster, mapPrefix: string, redisPort: number | undefined, log: (line: string) => void): Promise<BenchRow[]> {
  const config: ClientConfig = { clusterName: cluster.clusterName, network: { clusterMembers: cluster.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  const env = {
    GATEKEEPER_HZ_CLUSTER_NAME: cluster.clusterName,
    GATEKEEPER_HZ_MEMBERS: cluster.addresses.join(','),
    MAP_PREFIX: mapPrefix,
    CONCURRENCY: String(CONCURRENCY),
    SCAN_MS: String(DETECTION_SETTINGS.scanMs),
    HANG_LEASE_MS: String(DETECTION_SETTINGS.leaseMs),
    ...(redisPort !== undefined && { REDIS_PORT: String(redisPort) }),
  };
  const rows: BenchRow[] = [];
  const systems: Array<[System, () => Promise<Submitter>]> = [['gatekeeper', () => gatekeeperSubmitter(config, mapPrefix)]];
  if (redisPort !== undefined) systems.push(['bullmq', () => bullmqSubmitter(redisPort)]);
  else log('  redis-server not found: the BullMQ baseline is left out');
  for (const [system, open] of systems) {
    const submitter = await open();
    try {
      for (const nodes of [1, 3]) rows.push(...(await measure(system, nodes, env, submitter, `${system}-${nodes}-${Date.now()}`, log)));
      rows.push(await detection(system, env, submitter, `${system}-${Date.now()}`, log));
    } finally {
      await submitter.close();
    }
  }
  return rows;
}
