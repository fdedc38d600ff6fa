/*
 * npm run bench:docs: fills the tables of docs/benchmarks.md from bench/results/latest.json (or the results file
 * named as its argument). `npm run bench` runs it after a complete run; run it by hand after editing the page's prose
 * or the tables' code. The page's blocks are `<!-- bench-table NAME -->` … `<!-- /bench-table -->`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fillTables, tableNames } from './doc-tables';
import type { BenchResults } from './doc-rows';

export const BENCHMARKS_PAGE = join(__dirname, '..', 'docs', 'benchmarks.md');
export const LATEST_RESULTS = join(__dirname, 'results', 'latest.json');

/** Rewrites the page's tables from the results file; returns the names of the tables it wrote. */
export function writeDocTables(results = LATEST_RESULTS, page = BENCHMARKS_PAGE): string[] {
  const parsed = JSON.parse(readFileSync(results, 'utf8')) as BenchResults;
  const text = readFileSync(page, 'utf8');
  writeFileSync(page, fillTables(text, parsed));
  return tableNames(text);
}

if (require.main === module) {
  const names = writeDocTables(process.argv[2] ?? LATEST_RESULTS);
  process.stdout.write(`docs/benchmarks.md: ${names.length} tables written from ${process.argv[2] ?? 'bench/results/latest.json'} (${names.join(', ')})\n`);
}
