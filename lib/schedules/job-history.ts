import type { JobHistoryView, SlotVerdict } from './job-view';
import type { RunRecord } from './run-record';

/** Runs by how they ended, since the history began (see {@link JobHistoryView.counts}). */
export type RunCounts = JobHistoryView['counts'];

/**
 * What the cluster keeps about one job's runs: the newest `keep` runs, and what must outlive them (the newest
 * scheduled instant started, the last failure, totals). One entry per job, written by compare-and-set.
 */
export interface JobHistory {
  /** The job's name (`Class.method`, a runtime schedule's id, or `leader:<election>:<Class.method>`). */
  readonly job: string;
  /** Grows by one with every write. */
  readonly revision: number;
  /** Newest first, at most the configured number. */
  readonly runs: readonly RunRecord[];
  /** The newest scheduled instant a run started for (manual runs have none). */
  readonly lastInstant?: number;
  /** The newest run that failed, aborted or was stopped, kept when it falls out of `runs`. */
  readonly lastFailure?: RunRecord;
  /** Runs by how they ended. */
  readonly counts: RunCounts;
  /** Scheduled instants the slot ledger judged missed, and the newest of them. */
  readonly missed: { readonly count: number; readonly last?: number };
  /** When it was last written (the writer's clock). */
  readonly updatedAt: number;
  /**
   * Set while the job is failing: since when (its first failed run of the streak that made it so). Written by the one
   * write that made it failing, cleared by the one that made it recover (see `judgeHealth`).
   */
  readonly failingSince?: number;
  /**
   * The last turn of the job's health (failing or recovered): a unique id and when it was decided. The write that
   * turned it carries it, so a node whose answer was lost can tell later that its write landed and say the turn then,
   * and a store that came back from a loss keeps the later of two judgements.
   */
  readonly turn?: { readonly id: string; readonly at: number };
  /**
   * When this record was first written (the writer's clock), carried by every write after it: a record found with a
   * later one than a node last wrote was made anew, after the store lost the older (see `HistoryStore.lostSince`).
   * Absent from records written before it existed.
   */
  readonly createdAt?: number;
  /**
   * The slot ledger's verdicts on scheduled instants that did not run (missed, paused, skipped by the overlap policy,
   * no eligible node), as ranges of consecutive instants with one verdict, newest first, at most `SLOTS_KEPT`. The
   * instants that ran are the runs themselves (each names its `instant`). See `judgeSlots`.
   */
  readonly slots?: readonly SlotRange[];
  /**
   * Every fire instant up to this one (epoch ms) has its verdict: a run, or a range of {@link slots}. Judged later
   * instants are those of {@link ranAhead} and the newer ranges.
   */
  readonly judgedThrough?: number;
  /**
   * The schedule the ledger was last judged by (cron expression and zone): a write by a node with another (the
   * schedule was edited, or deployed anew) judges only instants after it, never the old schedule's by the new one.
   */
  readonly schedule?: string;
  /** Instants after {@link judgedThrough} that a run started for: remembered until judged (the runs may be trimmed first). */
  readonly ranAhead?: readonly number[];
  /**
   * The id of the last write that said something for the cluster (a health turn, missed slots, a job with no eligible
   * node): a node whose answer was lost tells from it later that its write landed, and says it then.
   */
  readonly said?: string;
}

/** Consecutive fire instants of a job with one verdict (see {@link SlotVerdict}). */
export interface SlotRange {
  readonly verdict: SlotVerdict;
  /** The oldest instant (epoch ms). */
  readonly first: number;
  /** The newest instant (epoch ms). */
  readonly last: number;
  /** How many fire instants, `first` and `last` included. */
  readonly count: number;
  /** The acquirer name of the node that noted the first of them (a skip), or judged them (missed). */
  readonly node: string;
}

/** What one node adds to a job's history in one write: runs (new, or further along) and slots it saw skipped. */
export interface HistoryDelta {
  /** Runs new to the history, or further along than it has them. */
  readonly runs: readonly RunRecord[];
  /** Ended runs the writer let go unwritten (more than `keep` waited while the cluster could not be written): counted, not listed. */
  readonly dropped?: { readonly counts: RunCounts; readonly lastFailure?: RunRecord };
  /** Instants this node saw skipped (paused, overlap, no eligible node): its notes for the slot ledger. */
  readonly slots?: readonly SlotRange[];
}

/** Ticks a node skipped per job since it started, by reason (a deny reason code, or `OVERLAP`, `DST_REPEAT`). */
export interface NodeTicks {
  /** The instance (process) counting. */
  readonly instance: string;
  /** Its acquirer name. */
  readonly node: string;
  /** When this node's counting began. */
  readonly since: number;
  /** When it was last written. */
  readonly updatedAt: number;
  /** Per job, per reason, how many ticks. */
  readonly skipped: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** The history of a job nothing has written yet. */
export function emptyHistory(job: string): JobHistory {
  return { job, revision: 0, runs: [], counts: {}, missed: { count: 0 }, updatedAt: 0 };
}
