/*
 * The tasks group's floor row: the least a leased task can cost on a Hazelcast member, with nothing of ours on the
 * path. A warm client of the bench's own submits a task (putIfAbsent), and three more (three workers, in this
 * process) each hear pending work through an entry listener with a member-side predicate, claim it
 * (replaceIfSame: pending to running) and complete it (replaceIfSame: running to finished), with 16 tasks in
 * flight, on a map with the same two indexes as the task store's and JSON values the size of its records. Three
 * round trips per task, every value parsed by the members for the indexes and the listeners' predicates: what any
 * fenced task queue on this member pays. Its member CPU per task sits beside gatekeeper's; its client CPU is the
 * bench process's (all four clients), so it is not comparable to a row whose workers are processes of their own.
 */
import { Client, HazelcastJsonValue, Predicates, type ClientConfig, type IMap } from 'hazelcast-client';
import { round, type BenchRow } from './bench-stats';
import { cpuWindow, type CpuParts } from './proc-cpu';

const IN_FLIGHT = 16;
const WORKERS = 3;
const TYPE = 'noop';

/** A task record of the shape and size the task store writes (pending, then running under a claim, then done). */
function record(id: string, i: number, state: 'pending' | 'running' | 'done', worker: string): HazelcastJsonValue {
  const at = 1_800_000_000_000 + i;
  const task: Record<string, unknown> = { v: 1, id, type: TYPE, name: id, priority: 0, data: null, state, seq: at * 1000, submittedAt: at, notBefore: at, epoch: state === 'pending' ? 0 : at * 1000 + 1 };
  if (state === 'pending') Object.assign(task, { attempts: [], rank: `${TYPE}:8000000000000000${at.toString(16).padStart(16, '0')}` });
  else {
    const attempt = { attempt: 1, epoch: at * 1000 + 1, instance: worker, acquirer: `${worker}-node`, startedAt: at };
    if (state === 'running') Object.assign(task, { attempts: [attempt], claim: { instance: worker, acquirer: `${worker}-node`, epoch: at * 1000 + 1, claimedAt: at, expiresAt: at + 30_000 } });
    else Object.assign(task, { attempts: [{ ...attempt, endedAt: at, outcome: 'done' }], result: null, finishedAt: at });
  }
  return new HazelcastJsonValue(JSON.stringify(task));
}

/** The floor row: `count` tasks through the raw lifecycle above, after `warmup` tasks as the gatekeeper and BullMQ rows have. */
export async function taskFloorRow(config: ClientConfig, mapName: string, count: number, warmup: number, procs: CpuParts, log: (line: string) => void): Promise<BenchRow> {
  const clients = await Promise.all(Array.from({ length: WORKERS + 1 }, () => Client.newHazelcastClient(config)));
  try {
    const maps = await Promise.all(clients.map((c) => c.getMap<string, HazelcastJsonValue>(mapName)));
    await maps[0].addIndex({ type: 'SORTED', attributes: ['state', 'rank'] });
    await maps[0].addIndex({ type: 'HASH', attributes: ['uncounted'] });
    const workers = maps.slice(1).map((map, w) => ({ map, name: `floor-worker-${w}`, heard: 0 }));
    for (const worker of workers) {
      // The task store's listener: pending tasks of its types, and claims by others (for turns), values included.
      const pendingOrOthersClaims = Predicates.or(Predicates.equal('state', 'pending'), Predicates.and(Predicates.equal('state', 'running'), Predicates.notEqual('claim.instance', worker.name)));
      const heard = () => void worker.heard++;
      await worker.map.addEntryListenerWithPredicate({ added: heard, updated: heard }, Predicates.and(pendingOrOthersClaims, Predicates.inPredicate('type', TYPE)), undefined, true);
    }
    const lifecycle = async (i: number, map: IMap<string, HazelcastJsonValue>) => {
      const id = `${TYPE}:floor-${i}`;
      const worker = workers[i % WORKERS];
      const pending = record(id, i, 'pending', worker.name);
      if ((await map.putIfAbsent(id, pending)) !== null) throw new Error(`task floor: ${id} existed`);
      const running = record(id, i, 'running', worker.name);
      if (!(await worker.map.replaceIfSame(id, pending, running))) throw new Error(`task floor: the claim of ${id} failed`);
      if (!(await worker.map.replaceIfSame(id, running, record(id, i, 'done', worker.name)))) throw new Error(`task floor: the completion of ${id} failed`);
    };
    const drive = async (from: number, tasks: number) => {
      let next = from;
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
        while (next < from + tasks) await lifecycle(next++, maps[0]);
      }));
    };
    await drive(0, warmup);
    const cpu = cpuWindow(procs);
    const start = process.hrtime.bigint();
    await drive(warmup, count);
    const elapsedS = Number(process.hrtime.bigint() - start) / 1e9;
    const used = cpu.stop();
    const tasksPerSec = round(count / elapsedS, 0);
    const cpuMsPer = used.bench === null || used.member === null ? null : { unit: 'task' as const, clients: round(used.bench / count, 3)!, store: round(used.member / count, 3)!, total: round((used.bench + used.member) / count, 3)! };
    log(`  hazelcast-raw task lifecycle (putIfAbsent, 2 replaceIfSame, ${WORKERS} listening clients, ${IN_FLIGHT} in flight): ${tasksPerSec}/s, CPU per task ${cpuMsPer ? `${cpuMsPer.clients} ms clients + ${cpuMsPer.store} ms member` : 'n/a'}`);
    return {
      scenario: 'floor-task-lifecycle', system: 'hazelcast-raw', nodes: WORKERS, semaphores: 0, runs: count, p50Ms: null, p99Ms: null, opsPerSec: null, storeOpsPerTick: null,
      roundTripsPerDecision: null, exactlyOncePct: null, tasksPerSec, roundTripsPerTask: 3, processCpuMs: used, cpuMsPer,
    };
  } finally {
    await Promise.all(clients.map((c) => c.shutdown()));
  }
}
