import type { Clock } from '../core/clock';
import type { HistoryDelta, JobHistory, SlotRange } from './job-history';
import type { SlotVerdict } from './job-view';
import type { HistoryStore } from './history-store';
import { HistorySlot, HistoryWriter } from './history-writer';
import { readDecideWrite } from '../store/read-decide-write';
import { mergeHistory, type HealthChange } from './job-history.rules';
import type { HistoryJudge } from './history-writer';
import { mergeSlots, type SlotNews } from './slot-ledger.rules';
import type { ScheduledJob } from './run/scheduled-job';
import { FAILED_OUTCOMES, runFailure, type JobRunOutcome, type RunRecord } from './run-record';
import type { ObservedRun } from './run/run-observer';
import type { RunPipelineObserver } from './run/run-observers';

/** How a node keeps its part of the run history. */
export interface HistoryRecorderOptions {
  /** Runs kept per job in the cluster. */
  readonly keep: number;
  /** How often this node writes what it has to tell (runs, skipped ticks); the most a crash can lose. */
  readonly flushIntervalMs: number;
  /** Deadline of each history call. */
  readonly callTimeoutMs: number;
  /** This node, as its runs and skipped ticks name it. */
  readonly identity: { readonly instance: string; readonly node: string };
  readonly clock: Clock;
  /** Told when a write fails (what is pending stays, and is tried again at the next flush). */
  readonly onFlushFailed?: (error: unknown) => void;
  /** Told after each flush whose writes all succeeded (one that wrote something, or had nothing to write). */
  readonly onFlushed?: () => void;
  /**
   * Told once per flush that found job histories lost with the store's data (see `HistoryStore.lostSince`): since
   * when, and the jobs whose history this node wrote back from what it last wrote or read. The history of jobs
   * this node did not hold is lost with the data.
   */
  readonly onLost?: (lost: { readonly lostSince: number; readonly restored: readonly string[] }) => void;
  /**
   * How this node judges a job it has: its thresholds for failing and recovered (`health`, for a job that has them) and
   * its calendar (the slot ledger, for a cron job); `undefined` for a job this node does not have.
   */
  readonly judge?: (job: string) => Pick<HistoryJudge, 'health' | 'calendar'> | undefined;
  /** Told when a write of this node's turned a job failing or recovered: once for the cluster. */
  readonly onHealth?: (change: HealthChange) => void;
  /** Told what a write of this node's slot ledger judged (missed slots, no eligible node): once for the cluster. */
  readonly onSlots?: (job: string, news: SlotNews) => void;
}

/** A run this node has to tell the cluster about. */
interface Pending {
  record: RunRecord;
  /** Changed since the last write that carried it. */
  dirty: boolean;
  /** A write under way carries this very record: if it lands, the run is counted by it. */
  writing?: boolean;
  /** Let go while that write was under way: tallied as dropped only if the write does not land. */
  letGo?: boolean;
}

/** Compare-and-sets a run's record in the application's transaction tries before it gives up (another node's flush came first each time). */
const ATTEMPTS_IN_TRANSACTION = 5;

/** Skipped-tick records live this long after their node's last write, and are written again well before. */
const TICKS_TTL_MS = 24 * 60 * 60_000;
const TICKS_REFRESH_MS = 6 * 60 * 60_000;
/**
 * A node's skipped-tick counts are written at most this often (or every flush interval, if longer): every node
 * that does not hold a job skips its every tick, so writing them each flush would cost a round trip per node per
 * flush, more than the runs themselves. Other nodes' counts are that much older than the reader's own.
 */
const TICKS_EVERY_MS = 60_000;

/**
 * This node's side of the run history. Runs, missed instants and skipped ticks are noted in memory as they happen
 * (no call on a tick's path) and written every `flushIntervalMs`: one compare-and-set per job that has news (through
 * the {@link HistoryWriter}, which also writes back what a store lost), and one write of this node's skipped-tick counts for every job together. A run still going at a flush is written as `running`, so a node that
 * dies mid-run leaves a trace the next holder's runs mark `unknown`.
 */
export class HistoryRecorder {
  /** The run history's place in the run seam: each run's record, skipped ticks counted, missed instants noted. */
  readonly observer: RunPipelineObserver = {
    started: (run) => this.records.set(run, this.started({ job: run.job, trigger: run.trigger, instant: run.instant, token: run.token, request: run.request })),
    ended: (run, end) => {
      const record = this.records.get(run);
      if (!record) return;
      this.records.delete(run);
      this.finished(record, end.outcome, end.durationMs, end.error);
    },
    skipped: (skip) => this.skippedTick(skip.job, skip.reason),
    slot: (job, verdict, instant, since) => this.noteSlot(job, verdict, instant, since),
  };
  /** The record of each run going on here, by its observed run. */
  private readonly records = new WeakMap<ObservedRun, RunRecord>();
  private readonly pending = new Map<string, Map<string, Pending>>();
  /** Instants this node saw skipped per job (its notes for the slot ledger), as ranges, until a write carries them. */
  private readonly notes = new Map<string, SlotRange[]>();
  /** Jobs whose notes are news of their own (overlap, no eligible node): written at the next flush. Paused ones wait for a write. */
  private readonly noted = new Set<string>();
  /** The start of each job's streak of `noEligibleNode` already noted from its start. */
  private readonly backdated = new Map<string, number>();
  /** Jobs with instants of a vacancy to judge, and from when (they settled): written then, news or not. */
  private readonly judgeAt = new Map<string, number>();
  /** Ended runs let go unwritten per job (more than `keep` waited): still counted at the next write. */
  private readonly dropped = new Map<string, { counts: Record<string, number>; lastFailure?: RunRecord }>();
  private readonly writer: HistoryWriter;
  private readonly skipped: Record<string, Record<string, number>> = {};
  private ticksDirty = false;
  private ticksWrittenAt = 0;
  /** Set at stop: the last flush writes everything, skipped ticks included. */
  private final = false;
  private readonly since: number;
  /**
   * Runs recorded `completed` inside the application's transaction ({@link completeIn}), by id, until their end is
   * written: if that transaction did not commit, a run that returned did not complete.
   */
  private readonly completedIn = new Set<string>();
  /** Runs started here so far: part of each run's id. */
  private sequence = 0;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(private readonly store: HistoryStore, private readonly options: HistoryRecorderOptions) {
    this.since = options.clock.now();
    this.writer = new HistoryWriter(store, options);
  }

  /** Starts writing every flush interval. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left (within the call deadline). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.final = true;
    await this.flush();
  }

  /** Notes a run that starts now; returns its record, to pass to {@link finished}. */
  started(run: { job: string; trigger: RunRecord['trigger']; instant?: number; token: number; request?: string }): RunRecord {
    const startedAt = this.options.clock.now();
    const { instance, node } = this.options.identity;
    const record: RunRecord = {
      id: runId(instance, run.token, startedAt, ++this.sequence), job: run.job, trigger: run.trigger, instant: run.instant, node, instance, token: run.token, startedAt,
      outcome: 'running', request: run.request,
    };
    this.put(record);
    return record;
  }

  /**
   * Notes how a run ended; `error`: what it threw (an `Error`, or `{ message, stack }`: its message and bounded stack
   * are kept, see `runFailure`), or a message alone.
   */
  finished(run: RunRecord, outcome: Exclude<JobRunOutcome, 'running' | 'unknown'>, durationMs: number, error?: unknown): RunRecord {
    const failure = error === undefined ? undefined : runFailure(error);
    const record: RunRecord = { ...run, outcome, durationMs, error: failure?.error, ...(failure?.stack !== undefined && { stack: failure.stack }) };
    this.put(record);
    return record;
  }

  /**
   * Records `run` (going on here) as completed through `store`, the history's reads and writes in the application's
   * transaction: the record commits with the transaction's rows or not at all. Once the run ends, its end is written as
   * usual; a run that returned although that transaction did not commit is written `failed`, saying so.
   */
  async completeIn(store: Pick<HistoryStore, 'read' | 'write'>, run: ObservedRun): Promise<void> {
    const record = this.records.get(run);
    if (!record) throw new Error(`${run.job}: no run of it is going on here to record`);
    const now = this.options.clock.now();
    const completed: RunRecord = { ...record, outcome: 'completed', durationMs: Math.max(0, now - record.startedAt) };
    const slot = new HistorySlot(store, record.job, this.options.callTimeoutMs);
    await readDecideWrite(`the history of "${record.job}" in the transaction`, slot, (current) => (
      { result: undefined, write: mergeHistory(current?.history, { runs: [completed] }, this.options.keep, now) }
    ), { attempts: ATTEMPTS_IN_TRANSACTION });
    this.completedIn.add(record.id);
  }

  /** Notes a tick of `job` this node skipped, and why (a deny reason code, `OVERLAP`, ...). */
  skippedTick(job: string, reason: string): void {
    const counts = (this.skipped[job] ??= {});
    counts[reason] = (counts[reason] ?? 0) + 1;
    this.ticksDirty = true;
  }

  /**
   * Notes that a scheduled `instant` of `job` did not run here for `verdict` (and, with `since`, none after `since`
   * did): the slot ledger's note. A paused instant waits for the job's next write; the others are news of their own.
   */
  noteSlot(job: ScheduledJob, verdict: SlotVerdict, instant: number, since?: number): void {
    const calendar = job.trigger;
    if (!calendar) return;
    const { node } = this.options.identity;
    // A streak is back-dated to its start once: later ticks of it extend the range by one (counting the calendar from
    // `since` at every tick would walk the whole streak, hours of instants, each time).
    if (since !== undefined && this.backdated.get(job.name) === since) since = undefined;
    else if (since !== undefined) this.backdated.set(job.name, since);
    const first = since === undefined ? instant : Math.min(instant, calendar.next(since - 1, 1)[0] ?? instant);
    const ranges = this.notes.get(job.name) ?? [];
    this.notes.set(job.name, mergeSlots(ranges, [{ verdict, first, last: instant, count: calendar.firesBetween(first - 1, instant + 1).count, node }], calendar));
    if (verdict !== 'paused') this.noted.add(job.name);
  }

  /** Instants of `job` up to `last` passed in a vacancy: judged by a write once they settle (see `JobKnownSince.vacant`). */
  vacant(job: string, last: number): void {
    this.judgeAt.set(job, Math.max(this.judgeAt.get(job) ?? -Infinity, last + this.settleMs));
  }

  /**
   * Since when `job` is known to the cluster (epoch ms): its history's first write; `undefined` when it has none (a
   * job new to the cluster). A history written before `createdAt` existed, or one that cannot be read now, answers
   * `-Infinity`.
   */
  knownSince(job: string): Promise<number | undefined> {
    return this.writer.knownSince(job);
  }

  /** The history of `job` as this node last wrote or read it, if it has one (no store call). */
  cached(job: string): JobHistory | undefined {
    return this.writer.cached(job);
  }

  /** This node's skipped-tick counts per job (what the next flush writes). */
  skippedHere(): Readonly<Record<string, Readonly<Record<string, number>>>> {
    return this.skipped;
  }

  /** Runs of `job` this node has not written yet, newest first (a reader here sees them at once). */
  unwritten(job: string): RunRecord[] {
    return [...(this.pending.get(job)?.values() ?? [])].map((p) => p.record).sort((a, b) => b.startedAt - a.startedAt);
  }

  /** Writes what this node has to tell; a flush already under way is joined, not doubled. */
  flush(): Promise<void> {
    this.flushing ??= this.flushAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Writes `job`'s news now (a run the next holder must see before it decides, such as a catch-up). */
  async flushJob(job: string): Promise<JobHistory | undefined> {
    return this.write(job);
  }

  private put(record: RunRecord): void {
    let runs = this.pending.get(record.job);
    if (!runs) this.pending.set(record.job, (runs = new Map()));
    runs.set(record.id, { record, dirty: true });
    // A cluster that cannot be written keeps at most `keep` ended runs waiting per job, the newest. The map is in
    // start order (a run's later records replace it in place), so the oldest ended runs are the first ones met:
    // no sort on a call's path, however many runs wait (@LeaderOnly methods can be called thousands of times a flush).
    // A run a write under way carries is tallied only if that write fails: if it lands, the run is counted by it.
    if (runs.size > this.options.keep) {
      let over = runs.size - this.options.keep;
      for (const old of runs.values()) {
        if (over === 0) break;
        if (old.record.outcome === 'running') continue;
        over--;
        runs.delete(old.record.id);
        if (old.writing) old.letGo = true;
        else this.tallyDropped(old.record);
      }
    }
  }

  /** Counts an ended run let go unwritten, for the next write of its job. */
  private tallyDropped(record: RunRecord): void {
    const dropped = this.dropped.get(record.job) ?? { counts: {} };
    dropped.counts[record.outcome] = (dropped.counts[record.outcome] ?? 0) + 1;
    if (FAILED_OUTCOMES.has(record.outcome)) dropped.lastFailure = record;
    this.dropped.set(record.job, dropped);
  }

  private async flushAll(): Promise<void> {
    const jobs = new Set([...this.pending].filter(([, runs]) => [...runs.values()].some((p) => p.dirty)).map(([job]) => job));
    for (const job of [...this.noted, ...this.dropped.keys()]) jobs.add(job);
    const now = this.options.clock.now();
    for (const [job, at] of this.judgeAt) if (at <= now || this.final) jobs.add(job);
    let failed = false;
    const failure = (error: unknown) => {
      failed = true;
      this.options.onFlushFailed?.(error);
    };
    await Promise.all([...jobs].map((job) => this.write(job).catch(failure)));
    if (!this.final) await this.writer.checkHeld((job) => this.write(job, true)).catch(failure);
    const lost = this.writer.takeLost();
    if (lost) this.options.onLost?.(lost);
    await this.writeTicks().catch(failure);
    if (!failed) this.options.onFlushed?.();
  }

  /** Writes `job`'s news (and, with `check`, writes back its history if the store lost it, even with no news). */
  private async write(job: string, check = false): Promise<JobHistory | undefined> {
    const runs = this.pending.get(job);
    const carried = [...(runs?.values() ?? [])].filter((p) => p.dirty);
    const taken = carried.map((p) => p.record);
    const slots = this.notes.get(job);
    const dropped = this.dropped.get(job);
    const dueAt = this.judgeAt.get(job);
    const due = dueAt !== undefined && dueAt <= this.options.clock.now();
    if (taken.length === 0 && !this.noted.has(job) && !dropped && !check && !due) return this.writer.cached(job);
    if (due) this.judgeAt.delete(job);
    this.notes.delete(job);
    this.noted.delete(job);
    this.dropped.delete(job);
    const delta: HistoryDelta = { runs: taken, ...(slots && { slots }), dropped };
    for (const p of carried) p.writing = true;
    let landed = false;
    try {
      const judge = this.options.judge?.(job);
      const written = await this.writer.write(job, this.completedIn.size === 0 ? delta : (current) => this.settledIn(current, delta), check, judge && { ...judge, settleMs: this.settleMs, node: this.options.identity.node, due });
      landed = written.landed;
      if (written.change) this.options.onHealth?.(written.change);
      if (written.news) this.options.onSlots?.(job, written.news);
      if (landed) this.settle(job, taken);
      return written.history;
    } catch (error) {
      if (due) this.judgeAt.set(job, Math.max(this.judgeAt.get(job) ?? -Infinity, dueAt));
      if (slots) this.takeBack(job, slots);
      if (dropped) this.dropped.set(job, mergeDropped(dropped, this.dropped.get(job)));
      throw error;
    } finally {
      for (const p of carried) {
        p.writing = false;
        if (p.letGo && !landed) this.tallyDropped(p.record);
      }
    }
  }

  /**
   * `delta` against the history as read (`current`): a run completed in a transaction of the application whose
   * record is not there ended is one whose transaction did not commit. If it returned, it is written `failed`.
   */
  private settledIn(current: JobHistory | undefined, delta: HistoryDelta): HistoryDelta {
    const ended = new Set(current?.runs.filter((r) => r.outcome !== 'running').map((r) => r.id));
    const runs = delta.runs.map((record) => (record.outcome === 'completed' && this.completedIn.has(record.id) && !ended.has(record.id)
      ? { ...record, outcome: 'failed' as const, error: 'the transaction the run was completed in (completeRunIn) did not commit' }
      : record));
    return { ...delta, runs };
  }

  /** Notes a write carried that did not land: kept for the next (with any noted meanwhile). */
  private takeBack(job: string, slots: readonly SlotRange[]): void {
    const calendar = this.options.judge?.(job)?.calendar;
    const now = this.notes.get(job) ?? [];
    this.notes.set(job, calendar ? mergeSlots(now, slots, calendar) : [...now, ...slots]);
    if (slots.some((range) => range.verdict !== 'paused')) this.noted.add(job);
  }

  /**
   * How long after an instant its verdict waits (ms): a run that started for it is written by then, unless its node
   * died or the store could not be written (two flushes and two call deadlines, the first flush's write retried).
   */
  private get settleMs(): number {
    return 2 * this.options.flushIntervalMs + 2 * this.options.callTimeoutMs;
  }

  /** What a write carried is told: ended runs are forgotten, running ones wait (clean) for their end. */
  private settle(job: string, written: readonly RunRecord[]): void {
    const runs = this.pending.get(job);
    if (!runs) return;
    for (const record of written) {
      const now = runs.get(record.id);
      if (now?.record !== record) continue; // it moved on while the write was under way: still to tell
      if (record.outcome === 'running') now.dirty = false;
      else {
        runs.delete(record.id);
        this.completedIn.delete(record.id);
      }
    }
    if (runs.size === 0) this.pending.delete(job);
  }

  private async writeTicks(): Promise<void> {
    const now = this.options.clock.now();
    if (!this.ticksDirty && (this.ticksWrittenAt === 0 || now - this.ticksWrittenAt < TICKS_REFRESH_MS)) return;
    if (this.ticksWrittenAt !== 0 && now - this.ticksWrittenAt < Math.max(TICKS_EVERY_MS, this.options.flushIntervalMs) && !this.final) return;
    this.ticksDirty = false;
    try {
      const { instance, node } = this.options.identity;
      await this.store.writeTicks({ instance, node, since: this.since, updatedAt: now, skipped: this.skipped }, TICKS_TTL_MS, this.options.callTimeoutMs);
      this.ticksWrittenAt = now;
    } catch (error) {
      this.ticksDirty = true;
      throw error;
    }
  }
}

/** Two tallies of dropped runs as one. */
function mergeDropped(a: { counts: Record<string, number>; lastFailure?: RunRecord }, b?: { counts: Record<string, number>; lastFailure?: RunRecord }) {
  if (!b) return a;
  const counts = { ...a.counts };
  for (const [outcome, count] of Object.entries(b.counts)) counts[outcome] = (counts[outcome] ?? 0) + count;
  const lastFailure = !a.lastFailure || (b.lastFailure && b.lastFailure.startedAt > a.lastFailure.startedAt) ? b.lastFailure : a.lastFailure;
  return { counts, lastFailure };
}

/**
 * Builds a run's id from who ran it, under which token, when it started, and the instance's count of runs: two runs
 * under one token can start within the same millisecond (a catch-up and its tick's own run, or calls of a
 * `@LeaderOnly` method), and each must stay a run of its own.
 */
function runId(instance: string, token: number, startedAt: number, sequence: number): string {
  return `${instance}:${token}:${startedAt}:${sequence}`;
}
