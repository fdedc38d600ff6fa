/*
 * Where a single decision's time goes, against the raw compare-and-set in the same window (issue 24). Not part of
 * `npm run bench`: a diagnostic run by hand (`node -r ts-node/register/transpile-only bench/decision-profile.ts`).
 * Interleaves blocks of raw `replaceIfSame` (a map nobody listens to, and the semaphore map the nodes listen to)
 * with grants and refreshes, and for every call records: the engine's work before the write is sent, the member's
 * answer, the continuation after it, GC pauses and the event-loop delay (a node is not sent the events of its own
 * writes, so none is waited for). Prints per-kind percentiles and what the slowest 1 % of calls overlapped.
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { Client, type ClientConfig, type IMap } from 'hazelcast-client';
import { decodeEntry, encodeEntry } from '../lib/permits/semaphore-entry.codec';
import { systemClock } from '../lib/core/clock';
import { validateDefinition } from '../lib/permits/definition.validator';
import { SemaphoreAdmin } from '../lib/permits/semaphore-admin';
import { HazelcastBackend } from '../lib';
import { declareNewStore } from '../lib/permits/new-store';
import { startApp } from '../test/support/app-process';
import { freePort } from '../test/support/free-port';
import { startMemberProcess } from '../test/support/member-process';
import { gatekeeperNode } from './bench-systems';
import { percentile, round } from './bench-stats';

const BLOCK = Number(process.env.PROFILE_BLOCK ?? 250);
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 8);
const LISTENER = process.env.PROFILE_LISTENER !== '0';

interface Sample { kind: string; start: number; sent?: number; answered?: number; end: number }
const gcs: Array<{ start: number; end: number }> = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
}).observe({ entryTypes: ['gc'] });

async function main(): Promise<void> {
  process.env.GATEKEEPER_HZ_JVM_FLAGS ??= '-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC';
  const member = await startMemberProcess(await freePort(), `profile-${process.pid}`);
  const config: ClientConfig = { clusterName: member.clusterName, network: { clusterMembers: member.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  const declarer = await Client.newHazelcastClient(config);
  await declareNewStore(new HazelcastBackend({ client: declarer }));
  const prefix = `p-${Date.now()}`;
  const total = BLOCK * ROUNDS;
  const admin = await gatekeeperNode('admin', config, prefix, false);
  const definitions = new SemaphoreAdmin(admin.store, systemClock);
  for (let i = 0; i < total + 200; i++) await definitions.define(validateDefinition({ name: `k-${i}`, duration: '60s' }));
  for (let i = 0; i < total; i++) await definitions.define(validateDefinition({ name: `s-${i}`, duration: '60s' }));
  for (let i = 0; i < total; i++) await definitions.define(validateDefinition({ name: `u-${i}`, duration: '60s' }));
  await admin.close();
  const listening = LISTENER ? await startApp(join(__dirname, 'listening-node.ts'), 'listening-node', {
    GATEKEEPER_HZ_CLUSTER_NAME: member.clusterName, GATEKEEPER_HZ_MEMBERS: member.addresses.join(','), MAP_PREFIX: prefix,
  }) : undefined;
  const holder = await gatekeeperNode('holder', config, prefix, false);
  // A holder with no values listener at all (no node is sent its own writes any more; this one hears nobody's): its
  // view gets its own writes from their answers, which is all a grant or refresh of a fresh key needs here.
  const unheard = await gatekeeperNode('unheard', config, prefix, false);
  // Its watch of the map stopped: the feed's listener removed from the member.
  await (unheard.store as unknown as { records: { hold: { unwatch(): Promise<void> } } }).records.hold.unwatch();
  const raw = await Client.newHazelcastClient(config);
  const quiet = await raw.getMap<string, string>(`${prefix}.floor`);
  const watched = await raw.getMap<string, string>(`${prefix}.semaphores`);

  // Instrument the holder's store: when its write is sent and answered.
  let current: Sample | undefined;
  const map = (holder.store as unknown as { records: { map(): { map: IMap<string, string> } } }).records.map().map;
  const replace = map.replaceIfSame.bind(map);
  map.replaceIfSame = ((key: string, oldValue: string, newValue: string) => {
    const sample = current;
    if (sample) sample.sent = performance.now();
    return replace(key, oldValue, newValue).then((r) => {
      if (sample) sample.answered = performance.now();
      return r;
    });
  }) as typeof map.replaceIfSame;
  const samples: Sample[] = [];
  const rawListened: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const run = async (kind: string, op: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < BLOCK; i++) {
      const s: Sample = { kind, start: performance.now(), end: 0 };
      current = s;
      await op(i);
      s.end = performance.now();
      current = undefined;
      samples.push(s);
    }
  };
  const seed = (m: IMap<string, string>, k: string) => m.set(k, JSON.stringify({ v: 0 }));
  for (let w = 0; w < 1000; w++) await holder.acquire(`k-${total + (w % 200)}`, 60_000);
  let value = JSON.stringify({ v: 0 });
  await seed(quiet, 'q');
  loop.enable();
  for (let r = 0; r < ROUNDS; r++) {
    const base = r * BLOCK;
    await run('raw-cas', async (i) => {
      const next = JSON.stringify({ v: i + 1, holder: 'h', expiresAt: Date.now() + 60_000, pad: 'x'.repeat(300) });
      if (!(await quiet.replaceIfSame('q', value, next))) throw new Error('raw cas lost');
      value = next;
    });
    // The same entries a grant writes, by a raw replaceIfSame on the listened map: the floor with our listeners.
    // Written with the holder's mark, so the holder's view in this process is not sent them (with any other writeId
    // it was, and its handling of them was the tail this row showed before). grant-unheard's writes still reach the
    // holder's view here: read that row's tail with this in mind (bench/floors.ts has the fair listened floor).
    await run('raw-cas-listened', async (i) => {
      const name = `k-${total + 100 + (i % 100)}`;
      const old = (await watched.get(name))!;
      const entry = decodeEntry(name, old);
      const next = encodeEntry({ ...entry, revision: entry.revision + 1, writeId: holder.store.writeId() });
      const t = performance.now();
      if (!(await watched.replaceIfSame(name, old, next))) throw new Error('raw cas lost');
      rawListened.push(performance.now() - t);
    });
    await run('grant', (i) => holder.acquire(`k-${base + i}`, 60_000));
    // The same with the other node's process stopped (SIGSTOP): the member still sends it every event, but its
    // handling of them no longer competes for this machine's two cores.
    listening?.child.kill('SIGSTOP');
    await run('grant-other-stopped', (i) => holder.acquire(`s-${base + i}`, 60_000));
    listening?.child.kill('SIGCONT');
    await run('grant-unheard', (i) => unheard.acquire(`u-${base + i}`, 60_000));
    await run('refresh', (i) => holder.acquire(`k-${base + i}`, 60_000));
  }
  loop.disable();
  await new Promise((r) => setTimeout(r, 200));

  const fmt = (v: number | null) => (v === null ? '-' : String(round(v, 3)));
  console.log(`blocks of ${BLOCK} x ${ROUNDS} rounds, listener process: ${LISTENER}`);
  console.log('kind               n     p50    p90    p99    max   | pre-send p50/p99 | answer p50/p99 | after p50/p99');
  for (const kind of ['raw-cas', 'grant', 'grant-other-stopped', 'grant-unheard', 'refresh']) {
    const of = samples.filter((s) => s.kind === kind);
    const d = of.map((s) => s.end - s.start);
    const pre = of.filter((s) => s.sent).map((s) => s.sent! - s.start);
    const ans = of.filter((s) => s.answered).map((s) => s.answered! - s.sent!);
    const after = of.filter((s) => s.answered).map((s) => s.end - s.answered!);
    console.log(`${kind.padEnd(17)} ${String(of.length).padEnd(5)} ${[50, 90, 99, 100].map((p) => fmt(percentile(d, p)).padEnd(6)).join(' ')} | ${fmt(percentile(pre, 50))}/${fmt(percentile(pre, 99))} | ${fmt(percentile(ans, 50))}/${fmt(percentile(ans, 99))} | ${fmt(percentile(after, 50))}/${fmt(percentile(after, 99))}`);
    // The slowest 1 %: what did they overlap?
    const slow = [...of].sort((a, b) => (b.end - b.start) - (a.end - a.start)).slice(0, Math.max(1, Math.ceil(of.length / 100)));
    const withGc = slow.filter((s) => gcs.some((g) => g.start < s.end && g.end > s.start)).length;
    const gcMs = slow.map((s) => gcs.filter((g) => g.start < s.end && g.end > s.start).reduce((a, g) => a + (g.end - g.start), 0));
    const slowAnswer = slow.filter((s) => s.answered && s.answered - s.sent! > 0.5 * (s.end - s.start)).length;
    if (kind === 'grant' || kind === 'refresh') {
      const t0 = samples[0].start;
      for (const s of slow.slice(0, 8)) {
        console.log(`     at ${new Date(performance.timeOrigin + s.start).toISOString()} (+${fmt(s.start - t0)} ms): total ${fmt(s.end - s.start)}, send ${fmt(s.sent! - s.start)}, answer ${fmt(s.answered! - s.sent!)}, after ${fmt(s.end - s.answered!)}`);
      }
    }
    console.log(`   slowest ${slow.length}: ${slow.map((s) => fmt(s.end - s.start)).slice(0, 8).join(' ')} ms; overlapping GC ${withGc} (GC ms in them ${gcMs.map((x) => fmt(x)).slice(0, 8).join(' ')}); answer > half ${slowAnswer}`);
  }
  console.log(`raw-cas-listened (the CAS alone) p50 ${fmt(percentile(rawListened, 50))} p99 ${fmt(percentile(rawListened, 99))}`);
  const gcInWindow = gcs.length;
  console.log(`GC: ${gcInWindow} pauses, total ${fmt(gcs.reduce((a, g) => a + g.end - g.start, 0))} ms, max ${fmt(Math.max(0, ...gcs.map((g) => g.end - g.start)))} ms`);
  console.log(`event-loop delay p50 ${fmt(loop.percentile(50) / 1e6)} p99 ${fmt(loop.percentile(99) / 1e6)} max ${fmt(loop.max / 1e6)} ms`);
  await holder.close();
  await unheard.close();
  await raw.shutdown();
  await declarer.shutdown();
  await listening?.stop();
  await member.stop();
}

void main().then(() => process.exit(0), (error: unknown) => {
  console.error(error);
  process.exit(1);
});
