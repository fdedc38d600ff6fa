/*
 * What the tables of docs/benchmarks.md are made of: a results file, its rows found by what they are, and the page's
 * way of writing a figure.
 */
import type { BenchRow } from './bench-stats';

/** A results file as `npm run bench` writes it. */
export interface BenchResults {
  machine: { cpu: string; cores: number; node: string; durationS: number; commit?: string | null; startedAt?: string };
  rows: BenchRow[];
}

/** A table: its header, then its rows, every cell text. */
export type Table = string[][];

/** Where a row was measured: the rows of the redis group are Redis's; the rest by system. */
export type Store = 'Hazelcast' | 'PostgreSQL' | 'Redis';

export const DASH = '–';

/** A number as the page shows it: thousands separated from 1,000 up, decimals as the results file has them. */
export function num(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return DASH;
  return Math.abs(value) >= 1000 ? Math.round(value).toLocaleString('en-US') : String(value);
}

/** `a / b` as a ratio with two decimals, or a dash. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a === null || a === undefined || !b ? null : Number((a / b).toFixed(2));
}

export const times = (value: number | null) => (value === null ? DASH : `${value}×`);
export const list = (values: Array<number | null | undefined>) => values.map(num).join(' / ');

/** Finds rows of one results file by what they are. */
export class RowFinder {
  constructor(private readonly rows: readonly BenchRow[]) {}

  /** Rows of `scenario`, in the redis group (`redis`) or outside it. */
  all(scenario: BenchRow['scenario'], system: BenchRow['system'], inRedisGroup = false, match: Partial<BenchRow> = {}): BenchRow[] {
    return this.rows.filter((r) => r.scenario === scenario && r.system === system && (r.group === 'redis') === inRedisGroup
      && Object.entries(match).every(([key, value]) => (r as unknown as Record<string, unknown>)[key] === value));
  }

  one(scenario: BenchRow['scenario'], system: BenchRow['system'], inRedisGroup = false, match: Partial<BenchRow> = {}): BenchRow | undefined {
    return this.all(scenario, system, inRedisGroup, match)[0];
  }

  has(scenario: BenchRow['scenario']): boolean {
    return this.rows.some((r) => r.scenario === scenario);
  }
}

/** Display names of the systems, as the page calls them. */
export const SYSTEM_NAMES: Record<BenchRow['system'], string> = {
  gatekeeper: 'gatekeeper', 'gatekeeper+history': 'gatekeeper, run history on', 'gatekeeper+ledger': 'gatekeeper, run history and slot ledger on', 'gatekeeper-postgres': 'gatekeeper',
  'gatekeeper-postgres+history': 'gatekeeper, run history on', 'gatekeeper-redis': 'gatekeeper', 'gatekeeper-redis+aof': 'gatekeeper, append-only file on',
  'pessimistic-lock': 'pessimistic lock (map lock)', redlock: 'redlock', 'bare-cron': 'bare `@Cron` method', 'dalloc-style': 'dalloc-style',
  bullmq: 'BullMQ', 'hazelcast-raw': 'raw Hazelcast calls', 'redis-raw': 'raw Redis calls', 'advisory-lock': 'advisory lock',
  'postgres-raw': 'raw PostgreSQL statements', 'pg-boss': 'pg-boss', 'graphile-worker': 'graphile-worker', 'bullmq-postgres': 'BullMQ (PostgreSQL backend)', 'fenced-transaction': 'fenced transaction', 'plain-transaction': 'the same transaction, no fence', 'one-more-statement': 'the same transaction with one `SELECT 1` more',
};
