/*
 * What a release-mode tick costs each node (issue 24 diagnostic, run by hand): the bench's cron workload (N nodes
 * in this process, M jobs, release with lockAtLeastFor 800 ms), with every store call of each node counted by kind
 * (compare-and-set won or lost, read) and the CPU of this process per node per tick.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type ClientConfig, type IMap } from 'hazelcast-client';
import { systemClock } from '../lib/core/clock';
import { validateDefinition } from '../lib/permits/definition.validator';
import { SemaphoreAdmin } from '../lib/permits/semaphore-admin';
import { declareFreshCluster } from '../lib/testing';
import { freePort } from '../test/support/free-port';
import { startMemberProcess } from '../test/support/member-process';
import { gatekeeperNode } from './bench-systems';

const JOBS = Number(process.env.PROFILE_JOBS ?? 100);
const TICKS = Number(process.env.PROFILE_TICKS ?? 10);
 /** Socket writes, counted when the process runs with `-r ./bench/count-socket-writes.cjs` (else zero). */
const writes: { calls: number; bytes: number } = (globalThis as { __writes?: { calls: number; bytes: number } }).__writes ?? { calls: 0, bytes: 0 };
const NODES = (process.env.PROFILE_NODES ?? '1,3,6').split(',').map(Number);

async function main(): Promise<void> {
  process.env.GATEKEEPER_HZ_JVM_FLAGS ??= '-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC';
  const member = await startMemberProcess(await freePort(), `rp-${process.pid}`);
  const config: ClientConfig = { clusterName: member.clusterName, network: { clusterMembers: member.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  const declarer = await Client.newHazelcastClient(config);
  await declareFreshCluster(declarer);
  await declarer.shutdown();
  const prefix = `rp-${Date.now()}`;
  const admin = await gatekeeperNode('admin', config, prefix, false);
  const definitions = new SemaphoreAdmin(admin.store, systemClock);
  for (const n of NODES) for (let i = 0; i < JOBS; i++) await definitions.define(validateDefinition({ name: `r-${n}-${i}`, duration: '5s' }));
  await admin.close();
  // The floor of a release-mode tick at one node: the same two compare-and-sets per job (grant, release) as raw
  // replaceIfSame calls on a map nobody listens to, issued the same way, so no entry event and none of our code.
  if (process.env.PROFILE_FLOOR !== '0') await floorTicks(config, prefix);
  for (const n of NODES) {
    const nodes = await Promise.all(Array.from({ length: n }, (_, i) => gatekeeperNode(`node-${i}`, config, prefix)));
    const counts = { casWon: 0, casLost: 0, reads: 0, grants: 0, denials: 0 };
    for (const node of nodes) {
      const map = (node.store as unknown as { map: IMap<string, string> }).map;
      // PROFILE_UNHEARD=1: the nodes' entry listeners removed, to see what the events cost (views then go stale:
      // a diagnostic only; lost compare-and-sets read instead).
      if (process.env.PROFILE_UNHEARD === '1') await map.removeEntryListener((node.store as unknown as { listenerId: string }).listenerId);
      const replace = map.replaceIfSame.bind(map);
      const get = map.get.bind(map);
      map.replaceIfSame = ((k: string, o: string, v: string) => replace(k, o, v).then((won) => ((won ? counts.casWon++ : counts.casLost++), won))) as typeof map.replaceIfSame;
      map.get = ((k: string) => (counts.reads++, get(k))) as typeof map.get;
    }
    const keys = Array.from({ length: JOBS }, (_, i) => `r-${n}-${i}`);
    let cpu = process.cpuUsage();
    for (let tick = 0; tick < TICKS + 2; tick++) {
      if (tick === 2) {
        for (const k of Object.keys(counts) as Array<keyof typeof counts>) counts[k] = 0;
        writes.calls = writes.bytes = 0;
        cpu = process.cpuUsage();
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
    const per = (x: number) => (x / (TICKS * n)).toFixed(1);
    console.log(`${n} node(s) x ${JOBS} jobs, per node per tick: cas won ${per(counts.casWon)} lost ${per(counts.casLost)} reads ${per(counts.reads)} grants ${per(counts.grants)} denials ${per(counts.denials)}; cpu ms ${((used.user + used.system) / 1000 / (TICKS * n)).toFixed(2)}; socket writes per node per tick ${(writes.calls / (TICKS * n)).toFixed(1)}`);
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
