import { GCProfiler, getHeapStatistics } from 'node:v8';

/** What one of V8's collections saw, as `GCProfiler` reports it. */
interface GcStatistic {
  readonly beforeGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
  readonly afterGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
}

/**
 * The bytes this process allocated on V8's heap since the call, every object whether collected or kept: what each
 * collection freed (V8's own before and after, from `v8.GCProfiler`) plus what the heap holds more than at the
 * start. Exact to the collections' own accounting, and cheap enough for a bench's worker (no sampling profiler, which
 * costs the process more than what it measures). `bytes()` reads it so far.
 */
export function heapAllocations(): { bytes(): number } {
  const startUsed = getHeapStatistics().used_heap_size;
  let freed = 0;
  let profiler = new GCProfiler();
  profiler.start();
  return {
    bytes() {
      const statistics = (profiler.stop()?.statistics ?? []) as GcStatistic[];
      // A new profiler at once: a collection between the two is not seen (it would be counted as held).
      profiler = new GCProfiler();
      profiler.start();
      for (const s of statistics) freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
      return freed + getHeapStatistics().used_heap_size - startUsed;
    },
  };
}

/** This (the bench) process's allocations, from its first reading on. */
let benchProcess: { bytes(): number } | undefined;

/** What a reading of {@link heapNow} gives: bytes allocated so far by the worker processes together, and by this one. */
export interface HeapReading {
  readonly workers: number;
  readonly bench: number;
}

/**
 * The heap bytes the worker processes had allocated at their last `operations()` report (each prints `HEAP` just
 * before its `OPS` line), summed, and what this process (the submitter and the harness) has allocated: read it right
 * after asking every node for its operations, before and after a window.
 */
export function heapNow(nodes: readonly { lastHeapBytes(): number }[]): HeapReading {
  benchProcess ??= heapAllocations();
  return { workers: nodes.reduce((sum, node) => sum + node.lastHeapBytes(), 0), bench: benchProcess.bytes() };
}

/** KB allocated per unit of work between two readings: the workers' (`clients`), and the bench process's apart; null without the workers'. */
export function heapKBPer(unit: 'task', before: HeapReading, after: HeapReading, units: number): { unit: 'task'; clients: number; bench: number } | null {
  const workers = after.workers - before.workers;
  if (!Number.isFinite(workers) || units <= 0) return null;
  const kb = (bytes: number) => Math.round((10 * bytes) / 1024 / units) / 10;
  return { unit, clients: kb(workers), bench: kb(after.bench - before.bench) };
}
