/*
 * Where a claim's time goes on a large backlog (issue 24). Not part of `npm run bench`: a diagnostic run by hand
 * (`node -r ts-node/register/transpile-only bench/backlog-profile.ts`). Runs the tasks-backlog rows of the bench
 * (gatekeeper only: the empty and the full backlog, BENCH_BACKLOG tasks) on a member of its own, with the worker
 * printing every task store call it makes (TRACE_CALLS; TRACE_CALLS=0 for A/B runs), with PROFILE_WAITING retries
 * backing off planted below each backlog (default none), and prints: the rows' figures, the calls made inside the
 * measured window (count and time per kind), and the calls that overlapped each of the slowest cycles. With
 * PROFILE_JFR=1 it also records the member's CPU samples over the run (Java Flight Recorder) and prints the hottest
 * frames.
 */
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, HazelcastJsonValue, type ClientConfig } from 'hazelcast-client';
import { encodeTask } from '../lib/store/tasks/task.codec';
import { decideSubmit } from '../lib/tasks/task-submit.rules';
import { HazelcastBackend } from '../lib';
import { declareNewStore } from '../lib/permits/new-store';
import { freePort } from '../test/support/free-port';
import { startMemberProcess } from '../test/support/member-process';
import { round } from './bench-stats';
import { commandOf, descendantsOf } from './proc-cpu';
import { backlogRows } from './task-backlog';
import { WorkerNode } from './worker-node';

interface Call { what: string; start: number; ms: number }

/** PROFILE_WAITING: retries backing off for an hour planted beside each row's backlog, below it in claim order. */
const WAITING = Number(process.env.PROFILE_WAITING ?? 0);

/** Writes WAITING retries backing off into both rows' task maps, as this build's store would store them. */
async function plantWaiting(config: ClientConfig, mapPrefix: string, log: (line: string) => void): Promise<void> {
  const client = await Client.newHazelcastClient(config);
  try {
    const now = Date.now();
    for (const backlog of [0, Number(process.env.BENCH_BACKLOG ?? 100_000)]) {
      const map = await client.getMap<string, HazelcastJsonValue>(`${mapPrefix}-${backlog}.tasks`);
      const tasks = Array.from({ length: WAITING }, (_, i) => ({
        ...decideSubmit(undefined, { type: 'noop', name: `waiting${i}`, seq: (now - 3_600_000) * 1000 + i * 10 }, now - 3_600_000, 60_000).task,
        notBefore: now + 3_600_000,
      }));
      for (let i = 0; i < tasks.length; i += 1_000) await map.setAll(tasks.slice(i, i + 1_000).map((t) => [t.id, new HazelcastJsonValue(encodeTask(t))]));
    }
    log(`  ${WAITING} retries backing off planted below each backlog`);
  } finally {
    await client.shutdown();
  }
}

async function main(): Promise<void> {
  process.env.GATEKEEPER_HZ_JVM_FLAGS ??= '-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC';
  process.env.TRACE_CALLS ??= '1';
  const member = await startMemberProcess(await freePort(), `backlog-profile-${process.pid}`);
  const config: ClientConfig = { clusterName: member.clusterName, network: { clusterMembers: member.addresses }, properties: { 'hazelcast.logging.level': 'OFF' } };
  const declarer = await Client.newHazelcastClient(config);
  await declareNewStore(new HazelcastBackend({ client: declarer }));
  await declarer.shutdown();
  const memberPids = descendantsOf(process.pid).filter((pid) => commandOf(pid) === 'java');
  const jfr = process.env.PROFILE_JFR === '1' ? join(tmpdir(), `backlog-${process.pid}.jfr`) : undefined;
  if (jfr) spawnSync('jcmd', [String(memberPids[0]), 'JFR.start', 'name=backlog', 'settings=profile']);
  // Every worker's calls and cycles, by capturing the lines the bench's own reader ignores.
  const calls: Call[][] = [];
  const read = WorkerNode.prototype['read' as keyof WorkerNode] as unknown as (this: WorkerNode, chunk: string) => void;
  const mine = new WeakMap<WorkerNode, { rest: string; calls: Call[] }>();
  (WorkerNode.prototype as unknown as { read: typeof read }).read = function (this: WorkerNode, chunk: string) {
    let state = mine.get(this);
    if (!state) {
      state = { rest: '', calls: [] };
      mine.set(this, state);
      calls.push(state.calls);
    }
    const lines = (state.rest + chunk).split('\n');
    state.rest = lines.pop()!;
    for (const line of lines) {
      const [kind, what, start, ms] = line.split(' ');
      if (kind === 'Q') state.calls.push({ what, start: Number(start), ms: Number(ms) });
    }
    read.call(this, chunk);
  };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const nodes: WorkerNode[] = [];
  const startNodes = WorkerNode.prototype.untilReady;
  WorkerNode.prototype.untilReady = function (this: WorkerNode) {
    nodes.push(this);
    return startNodes.call(this);
  };
  try {
    const mapPrefix = `profile-${Date.now()}`;
    if (WAITING > 0) await plantWaiting(config, mapPrefix, log);
    const rows = await backlogRows('gatekeeper', member, mapPrefix, undefined, { bench: process.pid, member: memberPids }, log);
    for (const [i, row] of rows.entries()) {
      const node = nodes[i];
      const starts = [...node.started.values()];
      const measured = starts.slice(0, 501);
      const from = measured[0];
      const to = measured.at(-1)!;
      const inWindow = calls[i].filter((c) => c.start + c.ms >= from && c.start <= to);
      log(`backlog ${row.backlog}: p50 ${row.p50Ms} p99 ${row.p99Ms} max ${row.maxMs} ms, ${row.tasksPerSec} claims/s, ${row.bytesPerClaim} B/claim, cpu ms/claim worker ${row.cpuMsPer?.clients} member ${row.cpuMsPer?.store} (member ${row.processCpuMs?.member} ms in ${row.processCpuMs?.windowMs} ms)`);
      const byKind = new Map<string, { n: number; ms: number; max: number }>();
      for (const c of inWindow) {
        const kind = c.what.split(/[:.]/)[0].replace(/_[0-9a-f]*$/, '');
        const k = byKind.get(kind) ?? { n: 0, ms: 0, max: 0 };
        byKind.set(kind, { n: k.n + 1, ms: k.ms + c.ms, max: Math.max(k.max, c.ms) });
      }
      for (const [what, k] of byKind) log(`  ${what}: ${k.n} calls, ${round(k.ms)} ms, max ${round(k.max)} ms`);
      const before = calls[i].filter((c) => c.start < from && !c.what.startsWith('write') && !c.what.startsWith('create'));
      log(`  before the window (start-up and the first search): ${before.map((c) => `${c.what} ${round(c.ms)}`).join(', ')}`);
      const cycles = measured.slice(1).map((s, k) => ({ k, ms: s - measured[k], from: measured[k], to: s })).sort((a, b) => b.ms - a.ms).slice(0, 5);
      for (const cycle of cycles) {
        const during = inWindow.filter((c) => c.start < cycle.to && c.start + c.ms > cycle.from && !c.what.startsWith('write'));
        log(`  cycle ${cycle.k}: ${round(cycle.ms)} ms; calls:\n    ${during.map((c) => `${c.what} ${round(c.ms)}`).join('\n    ') || 'none but its claim'}`);
      }
    }
  } finally {
    if (jfr) {
      spawnSync('jcmd', [String(memberPids[0]), 'JFR.stop', 'name=backlog', `filename=${jfr}`]);
      log(`member JFR recording: ${jfr}`);
    }
    await member.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
