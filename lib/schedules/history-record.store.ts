import { invalidDefinition } from '../core/errors/input.errors';
import type { RecordMap } from '../store/record-map';
import { MapHold } from '../store/map-hold';
import type { TransactionRecords, SqlTransaction } from '../store/sql-transaction';
import type { StoreBackend } from '../store/store-backend';
import type { JobHistory, NodeTicks } from './job-history';
import { decodeHistory, decodeTicks, encodeHistory, encodeTicks } from './job-history.codec';
import type { HistoryStore, StoredHistory } from './history-store';

/** The record maps of the run history: one record per job, and one skipped-ticks record per instance. */
export const HISTORY_MAPS = { jobs: 'job-runs', ticks: 'job-ticks' } as const;

/**
 * Run history on any backend of the store contract: `job-runs`, one canonical JSON record per job, written by
 * compare-and-set on the exact text read (created for the first run); `job-ticks`, one record per instance with its
 * skipped-tick counts, written only by that instance with a time-to-live. No watch: the history is read when asked
 * for, never pushed to every node.
 */
export class HistoryRecordStore implements HistoryStore {
  private readonly jobs: MapHold;
  private readonly ticks: MapHold;
  private operations = 0;

  constructor(private readonly backend: StoreBackend) {
    this.jobs = new MapHold(backend, HISTORY_MAPS.jobs, 'history');
    this.ticks = new MapHold(backend, HISTORY_MAPS.ticks, 'history');
  }

  /** {@inheritDoc HistoryStore.connect} */
  async connect(): Promise<void> {
    try {
      await this.jobs.open();
      await this.ticks.open();
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** {@inheritDoc HistoryStore.close} */
  async close(): Promise<void> {
    await Promise.all([this.jobs.close(), this.ticks.close()]);
  }

  /** {@inheritDoc HistoryStore.read} */
  async read(job: string, timeoutMs?: number): Promise<StoredHistory | undefined> {
    return readHistory(this.records(timeoutMs), job);
  }

  /** {@inheritDoc HistoryStore.readMany} */
  async readMany(jobs: readonly string[], timeoutMs?: number): Promise<Map<string, StoredHistory>> {
    if (jobs.length === 0) return new Map();
    const records = await this.require(this.jobs).getMany(jobs, { timeoutMs });
    return new Map(records.map(({ key, value }) => [key, { raw: value, history: decodeHistory(key, value) }]));
  }

  /** {@inheritDoc HistoryStore.write} */
  async write(job: string, expected: StoredHistory | undefined, next: JobHistory, timeoutMs?: number): Promise<StoredHistory | undefined> {
    return writeHistory(this.records(timeoutMs), job, expected, next);
  }

  /** {@inheritDoc HistoryStore.inTransaction} */
  inTransaction(transaction: SqlTransaction): Pick<HistoryStore, 'read' | 'write'> {
    if (!this.backend.recordsIn) throw invalidDefinition(undefined, 'transaction', "a run is recorded in your transaction when the run history is on PostgreSQL (backends: { history: 'postgres' })", 'completeRunIn');
    const records = this.backend.recordsIn(transaction, HISTORY_MAPS.jobs);
    return { read: (job) => readHistory(records, job), write: (job, expected, next) => writeHistory(records, job, expected, next) };
  }

  /** The job map's reads and compare-and-sets with a deadline, as the ones in a transaction are called (one call counted each). */
  private records(timeoutMs: number | undefined): TransactionRecords {
    const options = { timeoutMs };
    return {
      get: (key) => this.require(this.jobs).get(key, options),
      create: (key, value) => this.require(this.jobs).create(key, value, options),
      replace: (expected, value) => this.require(this.jobs).replace(expected, value, options),
    };
  }

  /** {@inheritDoc HistoryStore.remove} */
  async remove(job: string): Promise<void> {
    await this.require(this.jobs).delete(job);
  }

  /**
   * Every job's history, one call (operators' listings, e.g. the CLI's `jobs list`; the nodes never list). Not on
   * {@link HistoryStore}: only tools that read the store directly need it.
   */
  async list(timeoutMs?: number): Promise<StoredHistory[]> {
    const records = await this.require(this.jobs).list({ timeoutMs });
    return records.map(({ key, value }) => ({ raw: value, history: decodeHistory(key, value) }));
  }

  /** {@inheritDoc HistoryStore.writeTicks} */
  async writeTicks(ticks: NodeTicks, ttlMs: number, timeoutMs?: number): Promise<void> {
    await this.require(this.ticks).put(ticks.instance, encodeTicks(ticks), { timeoutMs, ttlMs: Math.max(1_000, ttlMs) });
  }

  /** {@inheritDoc HistoryStore.readTicks} */
  async readTicks(timeoutMs?: number): Promise<NodeTicks[]> {
    const records = await this.require(this.ticks).list({ timeoutMs });
    return records.map(({ key, value }) => decodeTicks(key, value));
  }

  /** {@inheritDoc HistoryStore.lostSince} */
  lostSince(job: string, timeoutMs?: number): Promise<number | undefined> {
    return this.require(this.jobs).lostSince(job, { timeoutMs });
  }

  /** {@inheritDoc HistoryStore.operationCount} */
  operationCount(): number {
    return this.operations;
  }

  /** `map`, counting the call about to be made on it. */
  private require(hold: MapHold): RecordMap {
    const map = hold.map();
    this.operations++;
    return map;
  }
}

/** A job's history as `records` hold it. */
async function readHistory(records: Pick<TransactionRecords, 'get'>, job: string): Promise<StoredHistory | undefined> {
  const record = await records.get(job);
  return record && { raw: record.value, history: decodeHistory(job, record.value) };
}

/** Writes `next` over `expected` (created when absent) by compare-and-set on the exact text; the stored result, or `undefined` when another write came first. */
async function writeHistory(records: TransactionRecords, job: string, expected: StoredHistory | undefined, next: JobHistory): Promise<StoredHistory | undefined> {
  const raw = encodeHistory(next);
  const written = expected === undefined ? await records.create(job, raw) : await records.replace({ key: job, value: expected.raw }, raw);
  return written ? { raw, history: next } : undefined;
}
