/*
 * What a release-mode tick costs each node (issue 24 diagnostic, run by hand): the bench's cron workload (N nodes
 * in this process, M jobs, release with lockAtLeastFor 800 ms), with every store call of each node counted by kind
 * (compare-and-set won or lost, read) and the CPU of this process per node per tick.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type ClientConfig, type IMap } from 'hazelcast-client';
import { systemClock } from '../lib/core/clock';
import { validateDefinition } from '../lib/permits/definition.validator';
import { SemaphoreAdmin } from '../lib/permits/semaphore-admin';
import { HazelcastBackend } from '../lib';
import { declareNewStore } from '../lib/permits/new-store';
import { freePort } from '../test/support/free-port';
import { startMemberProcess } from '../test/support/member-process';
import { gatekeeperNode } from './bench-systems';
import { threadCpuMs } from './proc-cpu';

const JOBS = Number(process.env.PROFILE_JOBS ?? 100);
const TICKS = Number(process.env.PROFILE_TICKS ?? 10);
 /** Socket writes, counted when the process runs with `-r ./bench/count-socket-writes.cjs` (else zero). */
const writes: { calls: number; bytes: number } = (globalThis as { __writes?: { calls: number; bytes: number } }).__writes ?? { calls: 0, bytes: 0 };
const NODES = (process.env.PROFILE_NODES ?? '1,3,6').split(',').map(Number);

/** CPU ms of each thread of this process since `before` (see `threadCpuMs`). */
const threadsSince = (before: Map<string, number>) => [...threadCpuMs()].map(([name, t]) => [name, t - (before.get(name) ?? 0)] as const).filter(([, ms]) => ms > 0).map(([name, ms]) => `${name} ${ms}`).join(', ');

/** PROFILE_CPU=<path prefix>: a V8 CPU profile of each measured window only (start-up and warm-up left out). */
const profiler = {
  session: undefined as Session | undefined,
  count: 0,
  async start(): Promise<void> {
    this.session ??= new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.start');
  },
  async stop(path: string): Promise<void> {
    const { profile } = await this.session!.post('Profiler.stop');
    writeFileSync(path, JSON.stringify(profile));
    this.session!.disconnect();
  },
};

async function main(): Promise<void> {
  process.env.GATEKEEPER_HZ_JVM_FLAGS ??= '-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC';
  const member = await startMemberProcess(await freePort(), `rp-${process.pid}`);
  const config: ClientConfig = { clusterName: member.clusterName, network: { clusterMembers: member.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  // PROFILE_METRICS=0: the client's own metrics (collected and deflated every 5 s per client) turned off (no
  // measurable effect on this workload: tried).
  if (process.env.PROFILE_METRICS === '0') config.metrics = { enabled: false };
  const declarer = await Client.newHazelcastClient(config);
  await declareNewStore(new HazelcastBackend({ client: declarer }));
  await declarer.shutdown();
  const prefix = `rp-${Date.now()}`;
  const admin = await gatekeeperNode('admin', config, prefix, false);
  const definitions = new SemaphoreAdmin(admin.store, systemClock);
  for (const n of NODES) for (let i = 0; i < JOBS; i++) await definitions.define(validateDefinition({ name: `r-${n}-${i}`, duration: '5s' }));
  await admin.close();
  // The floor of a release-mode tick at one node: the same two compare-and-sets per job (grant, release) as raw
  // replaceIfSame calls on a map nobody listens to, issued the same way, so no entry event and none of our code.
  // PROFILE_FLOOR=n runs it n times (the first runs are cold: JIT), 0 not at all.
  for (let i = 0; i < Number(process.env.PROFILE_FLOOR ?? 1); i++) await floorTicks(config, `${prefix}-${i}`);
  for (const n of NODES) {
    const nodes = await Promise.all(Array.from({ length: n }, (_, i) => gatekeeperNode(`node-${i}`, config, prefix)));
    const counts = { casWon: 0, casLost: 0, reads: 0, grants: 0, denials: 0 };
    for (const node of nodes) {
      // The permit store's record map, and under it the IMap its calls go to.
      const map = (node.store as unknown as { records: { map(): { map: IMap<string, string> } } }).records.map().map;
      const replace = map.replaceIfSame.bind(map);
      const get = map.get.bind(map);
      map.replaceIfSame = ((k: string, o: string, v: string) => replace(k, o, v).then((won) => ((won ? counts.casWon++ : counts.casLost++), won))) as typeof map.replaceIfSame;
      map.get = ((k: string) => (counts.reads++, get(k))) as typeof map.get;
    }
    const keys = Array.from({ length: JOBS }, (_, i) => `r-${n}-${i}`);
    let cpu = process.cpuUsage();
    let threads = threadCpuMs();
    for (let tick = 0; tick < TICKS + 2; tick++) {
      if (tick === 2) {
        for (const k of Object.keys(counts) as Array<keyof typeof counts>) counts[k] = 0;
        writes.calls = writes.bytes = 0;
        cpu = process.cpuUsage();
        threads = threadCpuMs();
        if (process.env.PROFILE_CPU) await profiler.start();
      }
      const next = Date.now() + 1000;
      await Promise.all(nodes.flatMap((m) => keys.map(async (key) => {
        if (!(await m.acquire(key, 5_000))) return void counts.denials++;
        counts.grants++;
        await m.release(key, 800);
      })));
      await sleep(Math.max(0, next - Date.now()));
    }
    const used = process.cpuUsage(cpu);
    if (process.env.PROFILE_CPU) await profiler.stop(`${process.env.PROFILE_CPU}-${n}-${profiler.count++}.cpuprofile`);
    const per = (x: number) => (x / (TICKS * n)).toFixed(1);
    console.log(`${n} node(s) x ${JOBS} jobs, per node per tick: cas won ${per(counts.casWon)} lost ${per(counts.casLost)} reads ${per(counts.reads)} grants ${per(counts.grants)} denials ${per(counts.denials)}; cpu ms ${((used.user + used.system) / 1000 / (TICKS * n)).toFixed(2)}; socket writes per node per tick ${(writes.calls / (TICKS * n)).toFixed(1)}`);
    if (process.env.PROFILE_THREADS === '1') console.log(`  threads, ms over the window: ${threadsSince(threads)}`);
    await Promise.all(nodes.map((m) => m.close()));
  }
  await member.stop();
}
/** The floor: the same two compare-and-sets per job per tick as raw calls on a map nobody listens to. */
async function floorTicks(config: ClientConfig, prefix: string): Promise<void> {
  const raw = await Client.newHazelcastClient(config);
  const floor = await raw.getMap<string, string>(`${prefix}.floor`);
  const values = new Map<string, string>();
  for (let i = 0; i < JOBS; i++) {
    values.set(`f-${i}`, JSON.stringify({ i, v: 0 }));
    await floor.set(`f-${i}`, values.get(`f-${i}`)!);
  }
  let floorCpu = process.cpuUsage();
  for (let tick = 0; tick < TICKS + 2; tick++) {
    if (tick === 2) {
      floorCpu = process.cpuUsage();
      writes.calls = writes.bytes = 0;
    }
    const next = Date.now() + 1000;
    await Promise.all(Array.from({ length: JOBS }, async (_, i) => {
      for (let w = 0; w < 2; w++) {
        const key = `f-${i}`;
        const value = JSON.stringify({ i, v: tick * 2 + w, holder: 'node-0', expiresAt: Date.now() + 5_000, pad: 'x'.repeat(250) });
        if (!(await floor.replaceIfSame(key, values.get(key)!, value))) throw new Error('floor lost');
        values.set(key, value);
      }
    }));
    await sleep(Math.max(0, next - Date.now()));
  }
  const floorUsed = process.cpuUsage(floorCpu);
  console.log(`floor: 2 raw compare-and-sets per job, ${JOBS} jobs, 1 client: cpu ms per tick ${((floorUsed.user + floorUsed.system) / 1000 / TICKS).toFixed(2)}; socket writes per tick ${(writes.calls / TICKS).toFixed(1)}`);
  await raw.shutdown();
}

void main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
