/** The p-th percentile (0..100) of `values`, or null when there are none. */
export function percentile(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Rounds to `digits` decimals, keeping null. */
export function round(value: number | null, digits = 3): number | null {
  return value === null ? null : Number(value.toFixed(digits));
}

/** One result row, in the format other tools read (see README, Performance). */
export interface BenchRow {
  scenario: 'decision-deny' | 'decision-grant' | 'decision-refresh' | 'decision-release' | 'cron-hold' | 'cron-release' | 'decorator-overhead';
  system: 'gatekeeper' | 'pessimistic-lock' | 'redlock' | 'bare-cron';
  nodes: number;
  semaphores: number;
  runs: number;
  p50Ms: number | null;
  p99Ms: number | null;
  opsPerSec: number | null;
  storeOpsPerTick: number | null;
  roundTripsPerDecision: number | null;
  exactlyOncePct: number | null;
  cpuMsPerTickPerNode?: number | null;
}
