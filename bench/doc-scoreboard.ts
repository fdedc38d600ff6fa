/*
 * The scoreboard of docs/benchmarks.md: each measured target of the scale-out work against the same run's
 * baselines, with whether it holds. Computed from the results file like every other table of the page.
 */
import type { BenchRow } from './bench-stats';
import { list, num, ratio, RowFinder, SYSTEM_NAMES, type Table } from './doc-rows';

/** One target: the figures it compares and whether every one of them holds. */
interface Target {
  target: string;
  ours: Array<number | null | undefined>;
  reference: string;
  theirs: Array<number | null | undefined>;
  /** Whether ours against theirs holds, figure by figure. */
  holds: (ours: number, theirs: number) => boolean;
  /** Said after the reference's figures. */
  note?: string;
}

const atLeast = (ours: number, theirs: number) => ours >= theirs;
const atMost = (factor: number) => (ours: number, theirs: number) => ours <= theirs * factor;

/** The baselines a two-figure row compares with, named once when they are the same one. */
const named = (a: string, b: string) => (a === b ? displayName(a) : `${displayName(a)} / ${displayName(b)}`);
const displayName = (system: string) => SYSTEM_NAMES[system as BenchRow['system']] ?? system;

/** The best of several baselines' figures, by `better`, with the name of the one that has it. */
function best(rows: RowFinder, scenario: BenchRow['scenario'], systems: BenchRow['system'][], nodes: number, figure: (r: BenchRow) => number | null | undefined, better: (a: number, b: number) => boolean): [string, number | null] {
  let found: [string, number | null] = ['–', null];
  for (const system of systems) {
    const value = figure(rows.one(scenario, system, false, { nodes }) ?? ({} as BenchRow));
    if (value !== null && value !== undefined && (found[1] === null || better(value, found[1]))) found = [system, value];
  }
  return found;
}

function targets(rows: RowFinder): Target[] {
  const redis = (scenario: BenchRow['scenario'], system: BenchRow['system'], match: Partial<BenchRow> = {}) => rows.one(scenario, system, true, match);
  const tasksPerSec = (r?: BenchRow) => r?.tasksPerSec;
  const cpu = (r?: BenchRow) => r?.cpuMsPer?.total;
  const decisions = ['decision-grant', 'decision-refresh', 'decision-release'] as const;
  const releaseMode = (system: BenchRow['system']) => [1, 3, 6].map((nodes) => redis('cron-release', system, { nodes, semaphores: 100 })?.cpuMsPerTickPerNode);
  const pgPeers: BenchRow['system'][] = ['pg-boss', 'graphile-worker', 'bullmq-postgres'];
  const pgBest = (nodes: number, figure: (r: BenchRow) => number | null | undefined, better: (a: number, b: number) => boolean) => best(rows, 'pg-tasks-throughput', pgPeers, nodes, figure, better);
  const [fastest1, fastTasks1] = pgBest(1, (r) => r.tasksPerSec, (a, b) => a > b);
  const [fastest3, fastTasks3] = pgBest(3, (r) => r.tasksPerSec, (a, b) => a > b);
  const [cheapest1, cheapCpu1] = pgBest(1, (r) => r.cpuMsPer?.total, (a, b) => a < b);
  const [cheapest3, cheapCpu3] = pgBest(3, (r) => r.cpuMsPer?.total, (a, b) => a < b);
  const pgBacklog = (system: BenchRow['system']) => rows.all('pg-tasks-backlog', system).filter((r) => (r.backlog ?? 0) > 0).at(-1);
  const pgFloor = rows.one('floor-cas', 'postgres-raw');
  const flat = (scenario: BenchRow['scenario'], system: BenchRow['system'], inRedis: boolean) => {
    const all = rows.all(scenario, system, inRedis).sort((a, b) => a.nodes - b.nodes);
    return { first: all[0], last: all.at(-1) };
  };
  const idle = (system: BenchRow['system']) => rows.all('idle-cluster', system).sort((a, b) => a.nodes - b.nodes).map((r) => r.idle?.roundTripsPerNodePerSec);
  const idleSizes = rows.all('idle-cluster', 'gatekeeper-redis').map((r) => r.nodes).sort((a, b) => a - b).join(' and ');
  const hzTasks = [1, 3].map((nodes) => rows.one('tasks-throughput', 'gatekeeper', false, { nodes })?.tasksPerSec);
  const result: Target[] = [
    { target: 'Redis: tasks/s at 1 / 3 workers, at least BullMQ\'s', ours: [1, 3].map((nodes) => tasksPerSec(redis('redis-tasks-throughput', 'gatekeeper-redis', { nodes }))),
      reference: 'BullMQ', theirs: [1, 3].map((nodes) => tasksPerSec(redis('redis-tasks-throughput', 'bullmq', { nodes }))), holds: atLeast },
    { target: 'Redis: a burst on 3 workers, tasks/s, at least BullMQ\'s', ours: [tasksPerSec(redis('redis-tasks-burst', 'gatekeeper-redis'))],
      reference: 'BullMQ', theirs: [tasksPerSec(redis('redis-tasks-burst', 'bullmq'))], holds: atLeast },
    { target: 'Redis: CPU ms per task, whole system, 1 / 3 workers, at most BullMQ\'s', ours: [1, 3].map((nodes) => cpu(redis('redis-tasks-throughput', 'gatekeeper-redis', { nodes }))),
      reference: 'BullMQ', theirs: [1, 3].map((nodes) => cpu(redis('redis-tasks-throughput', 'bullmq', { nodes }))), holds: atMost(1) },
    { target: 'Redis: grant / refresh / release p50 ms, within 1.2× redlock\'s', ours: decisions.map((s) => redis(s, 'gatekeeper-redis')?.p50Ms),
      reference: 'redlock', theirs: decisions.map((s) => redis(s, 'redlock')?.p50Ms), holds: atMost(1.2) },
    { target: 'Redis: grant / refresh / release p99 ms, within 2× redlock\'s', ours: decisions.map((s) => redis(s, 'gatekeeper-redis')?.p99Ms),
      reference: 'redlock', theirs: decisions.map((s) => redis(s, 'redlock')?.p99Ms), holds: atMost(2) },
    { target: 'Redis: release mode, CPU ms per node per tick of 100 jobs, 1 / 3 / 6 nodes, at most redlock\'s', ours: releaseMode('gatekeeper-redis'),
      reference: 'redlock', theirs: releaseMode('redlock'), holds: atMost(1) },
    { target: 'PostgreSQL: tasks/s at 1 / 3 workers, ahead of every peer', ours: [1, 3].map((nodes) => tasksPerSec(rows.one('pg-tasks-throughput', 'gatekeeper-postgres', false, { nodes }))),
      reference: `the fastest, ${named(fastest1, fastest3)}`, theirs: [fastTasks1, fastTasks3], holds: atLeast },
    { target: 'PostgreSQL: CPU ms per task, whole system, 1 / 3 workers, below every peer', ours: [1, 3].map((nodes) => cpu(rows.one('pg-tasks-throughput', 'gatekeeper-postgres', false, { nodes }))),
      reference: `the cheapest, ${named(cheapest1, cheapest3)}`, theirs: [cheapCpu1, cheapCpu3], holds: atMost(1) },
    { target: `PostgreSQL: one slot, ${num(pgBacklog('gatekeeper-postgres')?.backlog)} pending, cycle p50 ms, at most graphile-worker's`, ours: [pgBacklog('gatekeeper-postgres')?.p50Ms],
      reference: 'graphile-worker', theirs: [pgBacklog('graphile-worker')?.p50Ms], holds: atMost(1) },
    { target: 'PostgreSQL: grant p50 ms, within 1.3× the raw compare-and-set', ours: [rows.one('decision-grant', 'gatekeeper-postgres')?.p50Ms],
      reference: 'raw `UPDATE … WHERE value = $2`', theirs: [pgFloor?.p50Ms], holds: atMost(1.3) },
    { target: 'Hazelcast: tasks/s at 3 workers, at least at 1', ours: [hzTasks[1]], reference: 'ours at 1 worker', theirs: [hzTasks[0]], holds: atLeast },
  ];
  // Beside each, how the CPU per task of a baseline on the same store grew over the same worker counts.
  for (const [store, scenario, system, inRedis, peer] of [['Hazelcast', 'tasks-throughput', 'gatekeeper', false, 'bullmq'], ['PostgreSQL', 'pg-tasks-throughput', 'gatekeeper-postgres', false, 'graphile-worker'],
    ['Redis', 'redis-tasks-throughput', 'gatekeeper-redis', true, 'bullmq']] as const) {
    const { first, last } = flat(scenario, system, inRedis);
    if (!first || !last || first === last) continue;
    const peerAt = (nodes: number) => cpu(rows.one(scenario, peer, inRedis, { nodes }));
    const [from, to] = [peerAt(first.nodes), peerAt(last.nodes)];
    const note = from && to ? `; ${SYSTEM_NAMES[peer]} ${num(from)} → ${num(to)} (${ratio(to, from)}×)` : undefined;
    result.push({ target: `${store}: CPU ms per task flat in workers, at ${last.nodes} at most 1.2× at ${first.nodes}`, ours: [cpu(last)], reference: `ours at ${first.nodes}`, theirs: [cpu(first)], holds: atMost(1.2), note });
  }
  for (const [store, system] of [['Hazelcast', 'gatekeeper'], ['PostgreSQL', 'gatekeeper-postgres'], ['Redis', 'gatekeeper-redis']] as const) {
    const calls = idle(system);
    if (calls.length) result.push({ target: `${store}: an idle cluster of ${idleSizes} nodes, round trips per node per second, at most 1`, ours: calls, reference: 'the target', theirs: calls.map(() => 1), holds: atMost(1) });
  }
  return result;
}

/** The scoreboard as a table: every target, ours, the reference, their ratios and whether all of them hold. */
export function scoreboard(rows: RowFinder): Table {
  const table = [['target', 'gatekeeper', 'reference, same run', 'ratio', 'holds']];
  for (const t of targets(rows)) {
    const measured = t.ours.every((v) => typeof v === 'number') && t.theirs.every((v) => typeof v === 'number');
    const holds = measured && t.ours.every((v, i) => t.holds(v as number, t.theirs[i] as number));
    const ratios = t.ours.map((v, i) => ratio(v, t.theirs[i]));
    table.push([t.target, list(t.ours), (t.reference === 'the target' ? list(t.theirs) : `${t.reference}: ${list(t.theirs)}`) + (t.note ?? ''),
      ratios.map((r) => (r === null ? '–' : `${r}×`)).join(' / '), !measured ? 'not measured' : holds ? '**yes**' : 'no']);
  }
  return table;
}
