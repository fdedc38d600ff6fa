import type { SqlTransaction } from '../store/sql-transaction';
import type { JobHistory, NodeTicks } from './job-history';

/** A job's history as read, with the exact stored text a compare-and-set must name. */
export interface StoredHistory {
  /** The history, decoded. */
  readonly history: JobHistory;
  /** The exact text stored. */
  readonly raw: string;
}

/** Where the run history lives: one entry per job (compare-and-set), one skipped-ticks record per node. */
export interface HistoryStore {
  /** Opens the store (the module calls it at start-up). */
  connect(): Promise<void>;
  /** Closes it (at shutdown). */
  close(): Promise<void>;
  /** The job's history, or `undefined` when none was written. */
  read(job: string, timeoutMs?: number): Promise<StoredHistory | undefined>;
  /**
   * The histories of several jobs in one call (listings of many schedules), by job; jobs with none are absent.
   * Optional: without it, listings read job by job.
   */
  readMany?(jobs: readonly string[], timeoutMs?: number): Promise<Map<string, StoredHistory>>;
  /**
   * Writes `next` if the stored entry is still `expected` (`undefined`: absent); the stored result, or `undefined`
   * when another write came first (read again, merge again).
   */
  write(job: string, expected: StoredHistory | undefined, next: JobHistory, timeoutMs?: number): Promise<StoredHistory | undefined>;
  /** Removes a job's history (a runtime schedule removed). */
  remove(job: string): Promise<void>;
  /**
   * Replaces this node's skipped-ticks record (only its own instance writes it), kept `ttlMs` after its last
   * write so the records of nodes gone for good fall away.
   */
  writeTicks(ticks: NodeTicks, ttlMs: number, timeoutMs?: number): Promise<void>;
  /** Every node's skipped-ticks record. */
  readTicks(timeoutMs?: number): Promise<NodeTicks[]>;
  /** Calls made so far (benchmarks and tests of round trips). */
  operationCount(): number;
  /**
   * For a job whose history is found absent: since when (epoch ms) the store cannot rule out that it was lost with
   * the store's data, or `undefined` when it cannot have been lost. A node restores the history it last wrote or
   * read. Optional: a store without it is taken never to lose data.
   */
  lostSince?(job: string, timeoutMs?: number): Promise<number | undefined>;
  /**
   * The same reads and compare-and-sets inside the application's own database transaction, so a history write
   * commits with the application's rows or not at all. Makes no call; throws `InvalidInputError` naming `transaction`
   * when the store cannot write in one (only the PostgreSQL backend can). Optional: without it, the same error.
   */
  inTransaction?(transaction: SqlTransaction): Pick<HistoryStore, 'read' | 'write'>;
}
