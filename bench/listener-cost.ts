/*
 * What entry listeners add to a raw compare-and-set (issue 24 diagnostic, run by hand): the same `replaceIfSame`
 * on maps with no listener, a listener in another process, one in this process (with and without values), and
 * both, interleaved in one window.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client, type ClientConfig } from 'hazelcast-client';
import { percentile, round } from './bench-stats';
import { freePort } from '../test/support/free-port';
import { startMemberProcess } from '../test/support/member-process';

const BLOCK = 250;
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 8);

async function main(): Promise<void> {
  process.env.GATEKEEPER_HZ_JVM_FLAGS ??= '-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC';
  const member = await startMemberProcess(await freePort(), `lc-${process.pid}`);
  const config: ClientConfig = { clusterName: member.clusterName, network: { clusterMembers: member.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  const remoteCode = `
    const { Client } = require('hazelcast-client');
    (async () => {
      const c = await Client.newHazelcastClient(${JSON.stringify(config)});
      for (const name of ['qR', 'qRL']) { const m = await c.getMap(name); await m.addEntryListener({ updated: (e) => e.value.length, added: () => 0 }, undefined, true); }
      console.log('READY');
    })();`;
  const remote = spawn(process.execPath, ['-e', remoteCode], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  await once(remote.stdout!, 'data');
  const client = await Client.newHazelcastClient(config);
  let received = 0;
  for (const [name, values] of [['qL', true], ['qRL', true], ['qLk', false]] as const) {
    const m = await client.getMap<string, string>(name);
    await m.addEntryListener({ updated: () => received++, added: () => received++ }, undefined, values);
  }
  const names = ['q0', 'qR', 'qL', 'qLk', 'qRL'];
  const values = new Map<string, string>();
  const maps = new Map(await Promise.all(names.map(async (n) => [n, await client.getMap<string, string>(n)] as const)));
  for (const n of names) { values.set(n, 'x'); await maps.get(n)!.set('k', 'x'); }
  const samples = new Map<string, number[]>(names.map((n) => [n, []]));
  for (let r = -2; r < ROUNDS; r++) {
    for (const n of names) {
      const m = maps.get(n)!;
      for (let i = 0; i < BLOCK; i++) {
        const next = JSON.stringify({ v: r * BLOCK + i, holder: 'h', expiresAt: Date.now() + 60_000, pad: 'x'.repeat(300) });
        const t = performance.now();
        if (!(await m.replaceIfSame('k', values.get(n)!, next))) throw new Error('lost');
        if (r >= 0) samples.get(n)!.push(performance.now() - t);
        values.set(n, next);
      }
    }
  }
  for (const n of names) {
    const s = samples.get(n)!;
    console.log(`${n.padEnd(4)} p50 ${round(percentile(s, 50))} p90 ${round(percentile(s, 90))} p99 ${round(percentile(s, 99))}`);
  }
  console.log(`events received here: ${received}`);
  remote.kill('SIGTERM');
  await client.shutdown();
  await member.stop();
}
void main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
