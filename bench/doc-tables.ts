/*
 * The tables of docs/benchmarks.md, rendered from one results file (bench/results/latest.json), so the page's
 * figures are the run's and cannot drift from it. Each table has a name; the page marks where it goes with
 * `<!-- bench-table NAME -->` … `<!-- /bench-table -->` (bench/write-doc-tables.ts fills the blocks; a unit test
 * checks that the page matches the file).
 */
import type { BenchRow } from './bench-stats';
import { scoreboard } from './doc-scoreboard';
import { DASH, list, num, ratio, RowFinder, SYSTEM_NAMES, times, type BenchResults, type Store, type Table } from './doc-rows';

/** Each store's systems in the decision and cron tables, ours first, and whether they are the redis group's rows. */
const LOCK_SYSTEMS: ReadonlyArray<[Store, BenchRow['system'], boolean]> = [
  ['Hazelcast', 'gatekeeper', false], ['Hazelcast', 'pessimistic-lock', false],
  ['PostgreSQL', 'gatekeeper-postgres', false], ['PostgreSQL', 'advisory-lock', false],
  ['Redis', 'gatekeeper-redis', true], ['Redis', 'gatekeeper-redis+aof', true], ['Redis', 'redlock', true],
];
const FLOOR_SYSTEMS: ReadonlyArray<[Store, BenchRow['system'], boolean]> = [['Hazelcast', 'hazelcast-raw', false], ['PostgreSQL', 'postgres-raw', false], ['Redis', 'redis-raw', true]];

const p50p99 = (row: BenchRow | undefined) => (row ? `${num(row.p50Ms)} / ${num(row.p99Ms)}` : DASH);

function decisions(rows: RowFinder): Table {
  const table = [['store', 'system', 'deny', 'grant', 'refresh', 'release', 'grant p50 × raw compare-and-set']];
  for (const [store, system, redis] of LOCK_SYSTEMS) {
    const of = (scenario: BenchRow['scenario']) => rows.one(scenario, system, redis);
    if (!of('decision-grant')) continue;
    const floor = FLOOR_SYSTEMS.find(([s]) => s === store)!;
    const cas = rows.one('floor-cas', floor[1], floor[2]);
    table.push([store, SYSTEM_NAMES[system], p50p99(of('decision-deny')), p50p99(of('decision-grant')), p50p99(of('decision-refresh')), p50p99(of('decision-release')),
      times(ratio(of('decision-grant')?.p50Ms, cas?.p50Ms))]);
  }
  return table;
}

function floors(rows: RowFinder): Table {
  const table = [['store', 'get', 'compare-and-set', 'compare-and-set others listen to', 'sets per second, 16 in flight']];
  for (const [store, system, redis] of FLOOR_SYSTEMS) {
    if (!rows.one('floor-cas', system, redis)) continue;
    table.push([store, p50p99(rows.one('floor-get', system, redis)), p50p99(rows.one('floor-cas', system, redis)), p50p99(rows.one('floor-cas-listened', system, redis)),
      num(rows.one('floor-set-throughput', system, redis)?.opsPerSec)]);
  }
  return table;
}

const NODES = [1, 3, 6];

function cron(rows: RowFinder): Table {
  const table = [['store', 'system', 'hold: round trips per job tick, 1 / 3 / 6 nodes', 'release: the same', 'hold: CPU ms per node per tick of 100 jobs', 'release: the same', 'release: KB allocated per node and job tick, 100 jobs', 'ticks run exactly once']];
  for (const [store, system, redis] of LOCK_SYSTEMS) {
    const of = (scenario: 'cron-hold' | 'cron-release', nodes: number, semaphores: number) => rows.one(scenario, system, redis, { nodes, semaphores, runs: runsOf(rows, scenario, system, redis) });
    if (!of('cron-hold', 1, 1)) continue;
    const all = [...rows.all('cron-hold', system, redis), ...rows.all('cron-release', system, redis)];
    const once = Math.min(...all.map((r) => r.exactlyOncePct ?? 100));
    table.push([store, SYSTEM_NAMES[system],
      list(NODES.map((n) => of('cron-hold', n, 1)?.storeOpsPerTick)), list(NODES.map((n) => of('cron-release', n, 1)?.storeOpsPerTick)),
      list(NODES.map((n) => of('cron-hold', n, 100)?.cpuMsPerTickPerNode)), list(NODES.map((n) => of('cron-release', n, 100)?.cpuMsPerTickPerNode)),
      list(NODES.map((n) => of('cron-release', n, 100)?.heapKBPer?.clients)), `${num(once)} % of ${all.length} rows`]);
  }
  return table;
}

/** The cron rows' tick count: the shortest window a system ran (the run-history rows run longer, beside their own pairs). */
function runsOf(rows: RowFinder, scenario: BenchRow['scenario'], system: BenchRow['system'], redis: boolean): number | undefined {
  const counts = rows.all(scenario, system, redis).map((r) => r.runs);
  return counts.length ? Math.min(...counts) : undefined;
}

function history(rows: RowFinder): Table {
  // The slot ledger's column only once a run measured it (issue 66's rows).
  const ledgered = rows.all('cron-hold', 'gatekeeper+ledger').length > 0;
  const also = ledgered ? ' (→ with its slot ledger)' : '';
  const table = [['store', 'nodes × jobs', `round trips per job tick: without → with history${also}`, `CPU ms per node per tick: without → with${also}`]];
  for (const [store, without, withHistory, withLedger] of [['Hazelcast', 'gatekeeper', 'gatekeeper+history', 'gatekeeper+ledger'], ['PostgreSQL', 'gatekeeper-postgres', 'gatekeeper-postgres+history', undefined]] as const) {
    for (const on of rows.all('cron-hold', withHistory)) {
      const off = rows.one('cron-hold', without, false, { nodes: on.nodes, semaphores: on.semaphores, runs: on.runs }) ?? rows.one('cron-hold', without, false, { nodes: on.nodes, semaphores: on.semaphores });
      const ledger = withLedger && rows.one('cron-hold', withLedger, false, { nodes: on.nodes, semaphores: on.semaphores });
      const then = (value: number | null | undefined) => (ledger ? ` → ${num(value ?? undefined)}` : '');
      table.push([store, `${on.nodes} × ${on.semaphores}`, `${num(off?.storeOpsPerTick)} → ${num(on.storeOpsPerTick)}${then(ledger?.storeOpsPerTick)}`, `${num(off?.cpuMsPerTickPerNode)} → ${num(on.cpuMsPerTickPerNode)}${then(ledger?.cpuMsPerTickPerNode)}`]);
    }
  }
  return table;
}

function overhead(rows: RowFinder): Table {
  const table = [['a call of a method this node runs', 'p50 ms', 'p99 ms']];
  const add = (label: string, row: BenchRow | undefined) => row && table.push([label, num(row.p50Ms), num(row.p99Ms)]);
  add('bare `@Cron` method', rows.one('decorator-overhead', 'bare-cron'));
  add('`@ClusterSingleton`, a tick of a job this node holds', rows.one('decorator-overhead', 'gatekeeper'));
  add('bare method', rows.one('leader-only-overhead', 'bare-cron'));
  add('`@LeaderOnly` on the leader, run history off', rows.one('leader-only-overhead', 'gatekeeper'));
  add('`@LeaderOnly` on the leader, run history on', rows.one('leader-only-overhead', 'gatekeeper+history'));
  return table;
}

function schedules(rows: RowFinder): Table {
  const steady = rows.one('schedules-steady', 'gatekeeper');
  const now = rows.one('run-now', 'gatekeeper');
  const table = [['row', 'figure']];
  if (steady) {
    table.push([`${num(steady.semaphores)} runtime schedules on ${steady.nodes} nodes, each every 10 s: fires per second`, num(steady.opsPerSec)]);
    table.push(['store calls per second, cluster (per node)', `${num(steady.storeOpsPerSec?.total)} (${num(steady.storeOpsPerSec?.perNode)})`]);
    table.push(['store calls per fire', num(steady.storeOpsPerTick)]);
  }
  if (now) table.push([`run now, call to the run's start on the holder (${now.runs} calls)`, `p50 ${num(now.p50Ms)} ms, p99 ${num(now.p99Ms)} ms`]);
  return table;
}

/** The tasks rows' scenarios and systems, by store: the throughput, latency and burst scenarios and who ran them. */
const TASK_STORES: ReadonlyArray<{ store: Store; throughput: BenchRow['scenario']; latency: BenchRow['scenario']; burst?: BenchRow['scenario']; backlog?: BenchRow['scenario']; redis: boolean; systems: BenchRow['system'][] }> = [
  { store: 'Hazelcast', throughput: 'tasks-throughput', latency: 'tasks-latency', burst: 'tasks-burst', backlog: 'tasks-backlog', redis: false, systems: ['gatekeeper', 'bullmq'] },
  { store: 'PostgreSQL', throughput: 'pg-tasks-throughput', latency: 'pg-tasks-latency', backlog: 'pg-tasks-backlog', redis: false, systems: ['gatekeeper-postgres', 'pg-boss', 'graphile-worker', 'bullmq-postgres'] },
  { store: 'Redis', throughput: 'redis-tasks-throughput', latency: 'redis-tasks-latency', burst: 'redis-tasks-burst', redis: true, systems: ['gatekeeper-redis', 'gatekeeper-redis+aof', 'bullmq'] },
];

/** The worker counts the throughput rows ran, in order. */
function workerCounts(rows: RowFinder): number[] {
  const counts = new Set<number>();
  for (const { throughput, redis, systems } of TASK_STORES) for (const system of systems) for (const r of rows.all(throughput, system, redis)) counts.add(r.nodes);
  return [...counts].sort((a, b) => a - b);
}

const storeLabel = (store: Store, system: BenchRow['system']) => (store === 'Hazelcast' && system === 'bullmq' ? 'Hazelcast (BullMQ: on Redis)' : store);

function tasks(rows: RowFinder): Table {
  const counts = workerCounts(rows);
  const by = counts.join(' / ');
  const table = [['store', 'system', `tasks/s, ${by} workers`, `CPU ms per task, whole system, ${by}`, `of it the store's, ${by}`, `round trips per task, ${by}`, `KB allocated per task by the workers, ${by}`]];
  for (const { store, throughput, redis, systems } of TASK_STORES) {
    for (const system of systems) {
      const at = counts.map((nodes) => rows.one(throughput, system, redis, { nodes }));
      if (at.every((r) => !r)) continue;
      table.push([storeLabel(store, system), SYSTEM_NAMES[system], list(at.map((r) => r?.tasksPerSec)), list(at.map((r) => r?.cpuMsPer?.total)),
        list(at.map((r) => r?.cpuMsPer?.store)), list(at.map((r) => r?.roundTripsPerTask)), list(at.map((r) => r?.heapKBPer?.clients))]);
    }
  }
  const floor = rows.one('floor-task-lifecycle', 'hazelcast-raw');
  if (floor) table.push(['Hazelcast', `${SYSTEM_NAMES['hazelcast-raw']} (the floor: ${floor.nodes} clients in one process)`, num(floor.tasksPerSec), num(floor.cpuMsPer?.total), num(floor.cpuMsPer?.store), num(floor.roundTripsPerTask), num(floor.heapKBPer?.clients)]);
  return table;
}

function taskBursts(rows: RowFinder): Table {
  const table = [['store', 'system', 'workers', 'tasks', 'tasks/s', 'CPU ms per task', 'largest share', 'shares']];
  for (const { store, burst, redis, systems } of TASK_STORES) {
    if (!burst) continue;
    for (const system of systems) {
      for (const r of rows.all(burst, system, redis)) table.push([storeLabel(store, system), SYSTEM_NAMES[system], String(r.nodes), num(r.runs), num(r.tasksPerSec), num(r.cpuMsPer?.total), `${num(r.maxSharePct)} %`, (r.shares ?? []).map(num).join(' / ')]);
    }
  }
  return table;
}

function taskLatency(rows: RowFinder): Table {
  const counts = workerCounts(rows).filter((n) => n <= 3);
  const table = [['store', 'system', ...counts.map((n) => `submit → start p50 / p99 ms, ${n} worker${n === 1 ? '' : 's'}`)]];
  for (const { store, latency, redis, systems } of TASK_STORES) {
    for (const system of systems) {
      const at = counts.map((nodes) => rows.one(latency, system, redis, { nodes }));
      if (at.every((r) => !r)) continue;
      table.push([storeLabel(store, system), SYSTEM_NAMES[system], ...at.map(p50p99)]);
    }
  }
  return table;
}

function taskBacklog(rows: RowFinder): Table {
  const table = [['store', 'system', 'pending', 'claims/s', 'cycle p50 / p99 ms', 'longest cycle ms', 'bytes read per claim', 'CPU ms per claim', 'p50 × its empty queue']];
  for (const { store, backlog, redis, systems } of TASK_STORES) {
    if (!backlog) continue;
    for (const system of systems) {
      const all = rows.all(backlog, system, redis).sort((a, b) => (a.backlog ?? 0) - (b.backlog ?? 0));
      const empty = all.find((r) => r.backlog === 0);
      for (const r of all) {
        table.push([storeLabel(store, system), SYSTEM_NAMES[system], num(r.backlog), num(r.tasksPerSec), p50p99(r), num(r.maxMs), num(r.bytesPerClaim), num(r.cpuMsPer?.total),
          r.backlog ? times(ratio(r.p50Ms, empty?.p50Ms)) : DASH]);
      }
    }
  }
  return table;
}

function taskDetection(rows: RowFinder): Table {
  const table = [['system', 'a dead worker\'s task started again after', 'what bounds it']];
  for (const r of [rows.one('tasks-detection', 'gatekeeper'), rows.one('tasks-detection', 'bullmq')]) {
    if (!r) continue;
    const s = r.taskSettings;
    table.push([SYSTEM_NAMES[r.system], r.detectionMs === null || r.detectionMs === undefined ? DASH : `${(r.detectionMs / 1000).toFixed(1)} s`,
      s ? `lease ${s.leaseMs / 1000} s + skew bound ${s.maxClockSkewMs / 1000} s + scan ${s.scanMs / 1000} s = ${(s.leaseMs + s.maxClockSkewMs + s.scanMs) / 1000} s` : 'its defaults: a 30 s lock, then a 30 s stalled check']);
  }
  return table;
}

function idle(rows: RowFinder): Table {
  const table = [['store', 'nodes', 'round trips per node per second', 'the server\'s count per node per second', 'by capability']];
  for (const [store, system] of [['Hazelcast', 'gatekeeper'], ['PostgreSQL', 'gatekeeper-postgres'], ['Redis', 'gatekeeper-redis']] as const) {
    for (const r of rows.all('idle-cluster', system).sort((a, b) => a.nodes - b.nodes)) {
      const i = r.idle!;
      const byStore = Object.entries(i.byStore).sort(([, a], [, b]) => b - a).map(([k, v]) => `${k} ${num(v)}`).join(', ');
      table.push([store, String(r.nodes), num(i.roundTripsPerNodePerSec), i.serverCallsPerNodePerSec === null ? DASH : `${num(i.serverCallsPerNodePerSec)} ${i.serverUnit}`, byStore]);
    }
  }
  return table;
}

function leader(rows: RowFinder): Table {
  const table = [['row', 'nodes', 'settings', 'measured', 'bound or target']];
  const settings = (r: BenchRow) => (r.settings ? `lease ${r.settings.leaseMs / 1000} s, skew ${r.settings.maxClockSkewMs} ms, presence every ${r.settings.presenceIntervalMs / 1000} s` : DASH);
  for (const scenario of ['leader-failover-kill', 'leader-handover'] as const) {
    const r = rows.one(scenario, 'gatekeeper');
    if (!r?.failoverMs) continue;
    const f = r.failoverMs;
    table.push([scenario === 'leader-failover-kill' ? 'the leader SIGKILLed: failover' : 'the leader SIGTERMed: handover', String(r.nodes), settings(r),
      `p50 ${num(f.p50)} ms, max ${num(f.max)} ms (${f.runs.map(num).join(', ')})`, `${num(f.boundMs)} ms`]);
  }
  for (const r of rows.all('leader-steady', 'gatekeeper')) {
    const s = r.storeOpsPerSec!;
    table.push(['steady: store calls of the whole cluster per second', String(r.nodes), settings(r), `${num(s.total)}: presence ${num(s.presence)}, election ${num(s.permits)}`, 'grows with presence only']);
  }
  return table;
}

function allocation(rows: RowFinder): Table {
  const table = [['row', 'system', 'resources', 'moved / minimal', 'settled after', 'skew', 'unowned', 'store calls per rebalance']];
  for (const scenario of ['allocation-join', 'allocation-kill'] as const) {
    for (const system of ['gatekeeper', 'dalloc-style'] as const) {
      for (const r of rows.all(scenario, system).sort((a, b) => (a.resources ?? 0) - (b.resources ?? 0))) {
        table.push([scenario === 'allocation-join' ? 'a node joins, 3 → 4' : 'a node SIGKILLed, 4 → 3', SYSTEM_NAMES[system], num(r.resources), `${num(r.moved)} / ${num(r.minimalMoves)}`,
          r.convergeMs === null || r.convergeMs === undefined ? 'never' : `${num(r.convergeMs)} ms`, num(r.skew), num(r.unowned), num(r.storeOpsPerRebalance)]);
      }
    }
  }
  for (const r of rows.all('allocation-steady', 'gatekeeper')) {
    table.push(['steady, module defaults: store calls per second', SYSTEM_NAMES[r.system], num(r.resources), DASH, DASH, DASH, DASH, `${num(r.storeOpsPerSec?.total)} (${num(r.storeOpsPerSec?.perNode)} per node)`]);
  }
  return table;
}

/** The run itself: where and when it ran, on which commit, and for how long. */
function run(_rows: RowFinder, results: BenchResults): Table {
  const m = results.machine;
  return [['started', 'commit', 'machine', 'Node', 'took'],
    [m.startedAt ? m.startedAt.slice(0, 16).replace('T', ' ') + ' UTC' : DASH, m.commit ? `\`${m.commit}\`` : DASH, `${m.cores} × ${m.cpu}`, m.node, `${Math.round(m.durationS / 60)} min`]];
}

/** Every table of the page, by the name its block carries. */
export const DOC_TABLES: Record<string, (rows: RowFinder, results: BenchResults) => Table> = {
  run, scoreboard, decisions, floors, cron, history, overhead, schedules, tasks, 'task-bursts': taskBursts, 'task-latency': taskLatency,
  'task-backlog': taskBacklog, 'task-detection': taskDetection, idle, leader, allocation,
};

/** A table as Markdown, its cells' pipes escaped. */
export function markdown(table: Table): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(table[0]), line(table[0].map(() => '---')), ...table.slice(1).map(line)].join('\n');
}

/** Renders the named table from `results`; a table with no row of the run is an error, not an empty table. */
export function renderTable(name: string, results: BenchResults): string {
  const make = DOC_TABLES[name];
  if (!make) throw new Error(`docs/benchmarks.md names a table "${name}" that bench/doc-tables.ts does not know (known: ${Object.keys(DOC_TABLES).join(', ')})`);
  const table = make(new RowFinder(results.rows), results);
  if (table.length < 2) throw new Error(`The results file has no row for the table "${name}" of docs/benchmarks.md: run the whole \`npm run bench\``);
  return markdown(table);
}

const BLOCK = /<!-- bench-table ([a-z-]+) -->\n[\s\S]*?<!-- \/bench-table -->/g;

/** `page` with every marked table block filled from `results`; every table of DOC_TABLES must have its block, once. */
export function fillTables(page: string, results: BenchResults): string {
  const seen: string[] = [];
  const filled = page.replace(BLOCK, (_, name: string) => {
    seen.push(name);
    return `<!-- bench-table ${name} -->\n${renderTable(name, results)}\n<!-- /bench-table -->`;
  });
  const missing = Object.keys(DOC_TABLES).filter((name) => !seen.includes(name));
  const twice = seen.filter((name, i) => seen.indexOf(name) !== i);
  if (missing.length || twice.length) throw new Error(`docs/benchmarks.md: every table once (missing: ${missing.join(', ') || 'none'}; twice: ${twice.join(', ') || 'none'})`);
  return filled;
}

/** The names of the blocks `page` marks, in order. */
export function tableNames(page: string): string[] {
  return [...page.matchAll(BLOCK)].map((m) => m[1]);
}
