/*
 * What a release-mode tick costs one node on Redis, ours beside redlock in the same process and on the same server
 * (a diagnostic run by hand, not part of `npm run bench`):
 *
 *   node -r ts-node/register/transpile-only bench/redis-release-profile.ts
 *   node --no-memory-reducer -r ts-node/register/transpile-only bench/redis-release-profile.ts
 *
 * The bench's `cron-release` workload at one node (M jobs a tick, ticks a second apart, each job granted then released
 * with lockAtLeastFor 800 ms), measured per system in alternating windows: the process's CPU per tick, the part spent
 * inside the tick, and how it splits between the main thread and V8's helper threads (concurrent marking, compilers);
 * with PROFILE_HEAP=1 (or PROFILE_HEAP_FILE=<path prefix>, which also writes the profiles), the bytes allocated per job (V8's sampling heap profiler, every object, collected or not). Then
 * the same jobs one at a time, back to back: the acquire's p50 and p99 and the CPU per job.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlledRedis } from '../test/support/redis-control';
import { redlockNode, type BenchNode } from './bench-systems';
import { percentile, round } from './bench-stats';
import { threadCpuMs } from './proc-cpu';
import { gatekeeperRedisNode, prepareRedisPrefix } from './redis-systems';

const JOBS = Number(process.env.PROFILE_JOBS ?? 100);
const TICKS = Number(process.env.PROFILE_TICKS ?? 10);
const WARMUP = Number(process.env.PROFILE_WARMUP ?? 10);
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 2);
const HEAP = process.env.PROFILE_HEAP === '1' || process.env.PROFILE_HEAP_FILE !== undefined;
/** PROFILE_HEAP_FILE=<path prefix>: also the sampling heap profile of each system's first measured window (Chrome's `.heapprofile`). */
const HEAP_FILE = process.env.PROFILE_HEAP_FILE;
/** PROFILE_CPU=<path prefix>: a V8 CPU profile (sampled every 100 µs) of each system's first measured window. */
const CPU_PROFILE = process.env.PROFILE_CPU;
const TICK_MS = 1_000;
const AT_LEAST_MS = Number(process.env.PROFILE_AT_LEAST_MS ?? TICK_MS - 200);

/** CPU ms of this process's threads so far: the main thread, and V8's and libuv's helper threads together. */
function threadMs(): { main: number; helpers: number } {
  let main = 0;
  let helpers = 0;
  for (const [name, ms] of threadCpuMs()) {
    if (name === 'main') main += ms;
    else helpers += ms;
  }
  return { main, helpers };
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** Bytes allocated while `work` runs (every object, whether collected or not), by V8's sampling heap profiler. */
async function allocated(session: Session, work: () => Promise<void>, file?: string): Promise<number> {
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  await work();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  if (file !== undefined) writeFileSync(file, JSON.stringify(profile));
  let bytes = 0;
  const walk = (node: typeof profile.head): void => {
    bytes += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return bytes;
}

/** One tick: every job granted, then released with lockAtLeastFor (as the bench's `cron-release`). */
async function tick(node: BenchNode, names: readonly string[]): Promise<number> {
  let granted = 0;
  await Promise.all(names.map(async (name) => {
    if (!(await node.acquire(name, 5_000))) return;
    granted++;
    await node.release(name, AT_LEAST_MS);
  }));
  return granted;
}

/** `count` ticks a second apart; what they cost. */
async function window(node: BenchNode, names: readonly string[], count: number) {
  const cpu = process.cpuUsage();
  const threads = threadMs();
  let inTick = 0;
  let granted = 0;
  for (let i = 0; i < count; i++) {
    const next = Date.now() + TICK_MS;
    const started = process.cpuUsage();
    granted += await tick(node, names);
    inTick += cpuMs(started);
    await sleep(Math.max(0, next - Date.now()));
  }
  const after = threadMs();
  return { cpu: cpuMs(cpu) / count, inTick: inTick / count, main: (after.main - threads.main) / count, helpers: (after.helpers - threads.helpers) / count, granted: granted / count };
}

/** The same jobs one at a time: each acquire's latency, and the CPU per job (grant and release). */
async function oneAtATime(node: BenchNode, names: readonly string[], rounds: number) {
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      const started = performance.now();
      const granted = await node.acquire(name, 5_000);
      latencies.push(performance.now() - started);
      if (granted) await node.release(name, 0);
    }
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuPerJob: cpuMs(cpu) / (rounds * names.length) };
}

async function main(): Promise<void> {
  const server = await ControlledRedis.start({ appendonly: false });
  const session = new Session();
  session.connect();
  try {
    const prefix = `rp-${Date.now()}`;
    const ours = Array.from({ length: JOBS }, (_, i) => `ours-${i}`);
    const theirs = Array.from({ length: JOBS }, (_, i) => `redlock-${i}`);
    await prepareRedisPrefix(server.url, prefix, ours, () => false);
    const systems: Array<{ name: string; node: BenchNode; names: readonly string[] }> = [
      { name: 'gatekeeper-redis', node: await gatekeeperRedisNode('node-0', server.url, prefix), names: ours },
      { name: 'redlock', node: await redlockNode(server.port), names: theirs },
    ];
    for (const system of systems) await window(system.node, system.names, WARMUP);
    console.log(`release mode, 1 node, ${JOBS} jobs, ticks of ${TICK_MS} ms, ${TICKS} measured per window (after ${WARMUP} warm-up ticks), ${ROUNDS} alternating rounds:`);
    console.log('system            cpu ms/tick  in the tick  main thread  helper threads  granted/tick  KB allocated/job');
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      for (const system of round_ % 2 === 0 ? systems : [...systems].reverse()) {
        const profiled = CPU_PROFILE !== undefined && round_ < 2;
        if (profiled) {
          await session.post('Profiler.enable');
          await session.post('Profiler.setSamplingInterval', { interval: 100 });
          await session.post('Profiler.start');
        }
        const measured = await window(system.node, system.names, TICKS);
        if (profiled) writeFileSync(`${CPU_PROFILE}-${system.name}.cpuprofile`, JSON.stringify((await session.post('Profiler.stop')).profile));
        const bytes = HEAP ? await allocated(session, async () => void (await window(system.node, system.names, 2)), HEAP_FILE !== undefined && round_ < 2 ? `${HEAP_FILE}-${system.name}.heapprofile` : undefined) / (2 * JOBS) : undefined;
        console.log([
          system.name.padEnd(16), String(round(measured.cpu, 2)).padStart(11), String(round(measured.inTick, 2)).padStart(11), String(round(measured.main, 1)).padStart(11),
          String(round(measured.helpers, 1)).padStart(14), String(measured.granted).padStart(12), bytes === undefined ? '               -' : String(round(bytes / 1024, 1)).padStart(16),
        ].join('  '));
      }
    }
    console.log('\none job at a time, back to back (grant, then release):');
    for (const system of systems) {
      const measured = await oneAtATime(system.node, system.names, 20);
      console.log(`${system.name.padEnd(16)}  acquire p50 ${round(measured.p50, 3)} ms, p99 ${round(measured.p99, 3)} ms; cpu ${round(measured.cpuPerJob, 3)} ms per job`);
    }
    await Promise.all(systems.map((s) => s.node.close()));
  } finally {
    session.disconnect();
    await server.stop();
  }
}

void main().then(() => process.exit(0), (error: unknown) => {
  console.error(error);
  process.exit(1);
});
