import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchRow } from '../../bench/bench-stats';
import type { BenchResults } from '../../bench/doc-rows';
import { DOC_TABLES, fillTables, renderTable, tableNames } from '../../bench/doc-tables';

/**
 * docs/benchmarks.md shows the figures of bench/results/latest.json and no others: every table of the page is the one
 * bench/doc-tables.ts renders from that file (`npm run bench:docs` writes them; `npm run bench` does after a complete run).
 */
const PAGE = join(__dirname, '../../docs/benchmarks.md');
const LATEST = join(__dirname, '../../bench/results/latest.json');
const page = () => readFileSync(PAGE, 'utf8');
const latest = () => JSON.parse(readFileSync(LATEST, 'utf8')) as BenchResults;

/** A row of a scenario with only what the scoreboard reads. */
function row(scenario: BenchRow['scenario'], system: BenchRow['system'], fields: Partial<BenchRow>): BenchRow {
  return { scenario, system, nodes: 1, semaphores: 0, runs: 1, p50Ms: null, p99Ms: null, opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null, ...fields };
}
const results = (rows: BenchRow[]): BenchResults => ({ machine: { cpu: 'test', cores: 2, node: 'v20', durationS: 60 }, rows });
/** The scoreboard's line for a target whose text starts with `target`. */
const scoreLine = (rows: BenchRow[], target: string) => renderTable('scoreboard', results(rows)).split('\n').find((line) => line.startsWith(`| ${target}`));

describe('the tables of docs/benchmarks.md', () => {
  it('are the ones bench/results/latest.json gives, every table once (npm run bench:docs writes them)', () => {
    expect(tableNames(page()).sort()).toEqual(Object.keys(DOC_TABLES).sort());
    // A mismatch prints the page as it should be: run `npm run bench:docs` after a run or a change to the tables.
    expect(page()).toBe(fillTables(page(), latest()));
  });

  it('change with a figure of the results file', () => {
    const changed = latest();
    const target = changed.rows.find((r) => r.tasksPerSec && r.scenario.endsWith('tasks-throughput'))!;
    target.tasksPerSec = 123_456;
    const filled = fillTables(page(), changed);
    expect(filled).not.toBe(page());
    expect(filled).toContain('123,456');
  });

  it('come from a complete run: a table the file has no row for is an error that names it', () => {
    expect(() => renderTable('idle', results([]))).toThrow('no row for the table "idle"');
    expect(() => fillTables('<!-- bench-table nonesuch -->\n<!-- /bench-table -->', latest())).toThrow('"nonesuch"');
    expect(() => fillTables('no tables here', latest())).toThrow('missing: run, scoreboard');
  });

  it('score a target from the figures: held, missed, or not measured', () => {
    const redis = (system: BenchRow['system'], nodes: number, tasksPerSec: number) => row('redis-tasks-throughput', system, { nodes, tasksPerSec, group: 'redis' });
    const ahead = [redis('gatekeeper-redis', 1, 900), redis('bullmq', 1, 800), redis('gatekeeper-redis', 3, 1000), redis('bullmq', 3, 1000)];
    expect(scoreLine(ahead, 'Redis: tasks/s')).toBe('| Redis: tasks/s at 1 / 3 workers, at least BullMQ\'s | 900 / 1,000 | BullMQ: 800 / 1,000 | 1.13× / 1× | **yes** |');
    const behind = [redis('gatekeeper-redis', 1, 900), redis('bullmq', 1, 800), redis('gatekeeper-redis', 3, 999), redis('bullmq', 3, 1000)];
    expect(scoreLine(behind, 'Redis: tasks/s')).toMatch(/\| no \|$/);
    expect(scoreLine(ahead.slice(0, 3), 'Redis: tasks/s')).toMatch(/\| not measured \|$/);
    const grant = (system: BenchRow['system'], p50Ms: number) => row('decision-grant', system, { p50Ms });
    expect(scoreLine([grant('gatekeeper-postgres', 0.39), row('floor-cas', 'postgres-raw', { p50Ms: 0.3 })], 'PostgreSQL: grant')).toMatch(/\| 1\.3× \| \*\*yes\*\* \|$/);
    expect(scoreLine([grant('gatekeeper-postgres', 0.4), row('floor-cas', 'postgres-raw', { p50Ms: 0.3 })], 'PostgreSQL: grant')).toMatch(/\| 1\.33× \| no \|$/);
  });
});
