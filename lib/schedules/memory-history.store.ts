import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import type { JobHistory, NodeTicks } from './job-history';
import { decodeHistory, decodeTicks, encodeHistory, encodeTicks } from './job-history.codec';
import type { HistoryStore, StoredHistory } from './history-store';

/** The shared state of memory history stores: one per "cluster" (give the same backend to stores of one process). */
export class MemoryHistoryBackend {
  /** @internal */ readonly jobs = new Map<string, string>();
  /** @internal */ readonly ticks = new Map<string, { raw: string; until: number }>();
}

/** Run history in this process's memory (one instance, development, tests). Passes the same contract as Hazelcast's. */
export class MemoryHistoryStore implements HistoryStore {
  private operations = 0;

  constructor(private readonly backend: MemoryHistoryBackend = new MemoryHistoryBackend(), private readonly clock: Clock = systemClock) {}

  /** {@inheritDoc HistoryStore.connect} */
  async connect(): Promise<void> {}

  /** {@inheritDoc HistoryStore.close} */
  async close(): Promise<void> {}

  /** {@inheritDoc HistoryStore.read} */
  async read(job: string): Promise<StoredHistory | undefined> {
    this.operations++;
    const raw = this.backend.jobs.get(job);
    return raw === undefined ? undefined : { raw, history: decodeHistory(job, raw) };
  }

  /** {@inheritDoc HistoryStore.readMany} */
  async readMany(jobs: readonly string[]): Promise<Map<string, StoredHistory>> {
    this.operations++;
    const found = new Map<string, StoredHistory>();
    for (const job of jobs) {
      const raw = this.backend.jobs.get(job);
      if (raw !== undefined) found.set(job, { raw, history: decodeHistory(job, raw) });
    }
    return found;
  }

  /** {@inheritDoc HistoryStore.write} */
  async write(job: string, expected: StoredHistory | undefined, next: JobHistory): Promise<StoredHistory | undefined> {
    this.operations++;
    if (this.backend.jobs.get(job) !== expected?.raw) return undefined;
    const raw = encodeHistory(next);
    this.backend.jobs.set(job, raw);
    return { raw, history: decodeHistory(job, raw) };
  }

  /** {@inheritDoc HistoryStore.remove} */
  async remove(job: string): Promise<void> {
    this.operations++;
    this.backend.jobs.delete(job);
  }

  /** {@inheritDoc HistoryStore.writeTicks} */
  async writeTicks(ticks: NodeTicks, ttlMs: number): Promise<void> {
    this.operations++;
    this.backend.ticks.set(ticks.instance, { raw: encodeTicks(ticks), until: this.clock.now() + ttlMs });
  }

  /** {@inheritDoc HistoryStore.readTicks} */
  async readTicks(): Promise<NodeTicks[]> {
    this.operations++;
    const now = this.clock.now();
    return [...this.backend.ticks].filter(([, entry]) => entry.until > now).map(([key, entry]) => decodeTicks(key, entry.raw));
  }

  /** {@inheritDoc HistoryStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }
}
